"""The lowering guard: try Triton's lowering of an annotated module in a child process first.

Triton 3.6's warp-specialization lowering can hang (``pipeline`` spins forever on some
annotations) or take the process down on annotations it does not expect. A user's compile
must do neither, so before the drop-in lowers a partitioned module in its own process it asks
a helper process to lower the same text, under a time limit:

- The helper (the *server*) is one Python process per user process, started on the first
  warp-specialized compile (``python -c ... _serve()``), with Triton imported once. It exits
  when its parent does (end of its stdin) or after ``IDLE_S`` without work.
- For each probe the server forks a child at once (the server is single-threaded, so
  forking is safe and costs milliseconds): probes of several threads run side by side, at
  most one per usable core (``usable_cores``), and each answer carries its request's id. The
  child builds a fresh MLIR context, parses the text and runs ``run_after_partition`` one
  pass group at a time, telling the server which one it is in; its stdout/stderr go to a
  file whose tail comes back with the verdict.
- The server kills the child when the time limit passes (verdict ``hang``, naming the pass
  group that did not finish); a child that dies without an answer is a ``crash`` (naming
  the signal); a Python exception (``PassManager::run failed`` and the like) is an
  ``error`` with its MLIR diagnostics. Each child leads a process group of its own, so a
  kill takes what it runs (ptxas, nvdisasm) with it, and dies with the server.
- ``cancel`` stops a probe nobody else waits for (the drop-in's speculative builds): its
  child is killed and it answers ``cancelled``, kept nowhere. A probe its caller gives up
  (Ctrl-C) is cancelled the same way; its answer goes to no other probe.

Verdicts are cached in memory and on disk by a digest of everything the lowering depends on
(annotated text, target, options, register rewrite, Hopper fix, Triton and ws_solver
versions), so an autotuning sweep or a second process probes each module once; two threads
asking for the same key at once share one probe.

If the helper cannot be started (no usable ``sys.executable``, no ``fork``), the guard says
so (verdict ``unavailable``) and the drop-in lowers unguarded, as before the guard existed.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import pickle
import tempfile
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ...core import readers
from .helper import STARTUP_TIMEOUT_S as STARTUP_TIMEOUT_S
from .helper import ServerGone as _ServerGone
from .helper import ServerHandle as _ServerHandle
from .server import BINARY, LOWERED, Lowering, hang_reason

DEFAULT_TIMEOUT_S = 60.0
GRACE_S = 15.0  # on top of a probe's limit, for the server to kill the child and answer
PROBE_FUNCTION = (
    "ws_solver.triton.guard.server:probe_lowering"  # "module:function", run in the child
)
PERSISTED = ("ok", "error", "hang", "crash")  # verdicts worth keeping across processes
CANCELLED = "cancelled"  # a probe stopped by `LoweringGuard.cancel` (kept nowhere)
KEPT_BINARIES = 16  # cubins of this process's probes kept for its compiles (a few MB at most)
KEPT_LOWERINGS = 8  # their TTGIR, LLVM IR and PTX (the compile takes the one it keeps next)


@dataclass(frozen=True)
class LoweringJob:
    """What the child lowers: everything ``run_after_partition`` and the rewrite depend on."""

    text: str  # the annotated partitioner output
    capability: int
    options: Any  # Triton's CUDAOptions (picklable), or any object with the fields used
    num_warps: int
    registers: tuple  # per specialized loop: ((partition id, registers), ...)
    apply_registers: bool
    hopper: bool  # apply ws_solver.triton.rewrites.hopper's fix after pipelining (sm_90)
    overlap: bool = False  # sink wgmma waits after pipelining (sm_90, overlap.py)
    release_per_warp_group: bool = False  # the PTX rewrite will follow (keeps releases put)
    take_turns: bool = False  # after the PTX rewrite, the warp groups take turns (pingpong)
    # `text` has every op located (the compile read it): the child does not parse it for
    # that. Not in the key: the lowering is the same either way.
    located: bool = False

    def key(self, function: str = PROBE_FUNCTION) -> str:
        """Digest of everything the verdict depends on."""
        h = hashlib.sha256()
        for part in (
            function,
            str(self.capability),
            _options_key(self.options),
            repr(self.registers),
            repr(self.apply_registers),
            repr(self.hopper),
            repr(self.overlap),
            repr(self.release_per_warp_group),
            repr(self.take_turns),
            _versions(),
        ):
            h.update(part.encode())
            h.update(b"\0")
        h.update(self.text.encode())
        return h.hexdigest()


@dataclass(frozen=True)
class Verdict:
    """The outcome of one probe."""

    status: str  # "ok" | "error" | "hang" | "crash" | "unavailable" | "cancelled"
    stage: str = ""  # the probe stage it was in (see STAGE_NAMES)
    reason: str = ""  # one line, for warnings and reports; "" when ok
    error_type: str = ""  # "error": the exception's type name
    message: str = ""  # "error": the exception's first line
    stderr: str = ""  # the tail of the child's stdout/stderr (MLIR diagnostics)
    wall_s: float = 0.0  # the child's time (0 when cached or unavailable)
    timeout_s: float = 0.0
    cached: bool = False
    facts: dict = field(default_factory=dict)  # "ok": what probe_binary/probe_stock built

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def usable(self) -> bool:
        """Whether the verdict says anything about the module (not a guard failure)."""
        return self.status != "unavailable"

    def summary(self) -> dict:
        """The report's record of this probe."""
        return {
            "status": self.status,
            "stage": self.stage,
            "wall_s": round(self.wall_s, 4),
            "cached": self.cached,
            **({"reason": self.reason} if self.reason else {}),
        }


# -- the parent's side ------------------------------------------------------------------------
class LoweringGuard:
    """Probes lowerings in a helper process, with verdicts cached in memory and on disk.
    Probes of several threads run side by side (a child each, at most ``parallel`` at once:
    the usable cores); two of the same key run once."""

    def __init__(self, parallel: int | None = None) -> None:
        self._lock = threading.RLock()  # the helper's handle, the verdicts, the probes in flight
        self._server: _ServerHandle | None = None
        self._memory: dict[str, Verdict] = {}
        self._flights: dict[str, _Flight] = {}
        self._slots = threading.Semaphore(parallel or usable_cores())
        self._broken: str | None = None  # why the helper cannot start (once known)
        self._server_ever_ready = False
        # Cubins by key and lowerings by job key, with a lock of their own: a compile asks
        # while another probes.
        self._binaries: dict[str, bytes] = {}
        self._lowerings: dict[str, Lowering] = {}
        self._binaries_lock = threading.Lock()

    def start(self) -> None:
        """Start the helper now (non-blocking), so that Triton's import overlaps other work."""
        with self._lock:
            if self._broken is not None:
                return
            with contextlib.suppress(Exception):
                self._handle()

    def probe(
        self,
        job: LoweringJob,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        cache_dir: str | os.PathLike | None = None,
        function: str | None = None,
    ) -> Verdict:
        """Lower ``job`` in a child process within ``timeout_s``; cached by ``job.key()``.
        A probe of the key already in flight (another thread's) waits for that one."""
        function = function or PROBE_FUNCTION
        key = job.key(function)
        while True:
            with self._lock:
                hit = self._memory.get(key) or _read_verdict(cache_dir, key)
                if hit is not None:
                    self._memory[key] = hit
                    return replace(hit, cached=True)
                if self._broken is not None:
                    reason = f"lowering guard unavailable: {self._broken}"
                    return Verdict("unavailable", reason=reason)
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._flights[key] = _Flight()
                    break
                flight.followers += 1
            flight.done.wait()
            if flight.verdict is not None and flight.verdict.status != CANCELLED:
                return flight.verdict
        try:
            with self._slots:
                if flight.cancelled:  # before it was sent
                    verdict = Verdict(CANCELLED, reason=CANCELLED)
                else:
                    verdict = self._keep_builds(key, self._run(job, timeout_s, function, flight))
            if verdict.status in PERSISTED and verdict.stage != "guard":
                with self._lock:
                    self._memory[key] = verdict
                _write_verdict(cache_dir, key, verdict)
            flight.verdict = verdict
            return verdict
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

    def known(self, key: str, cache_dir: str | os.PathLike | None = None) -> Verdict | None:
        """The verdict kept for ``key`` (in memory, else on disk), without probing."""
        with self._lock:
            hit = self._memory.get(key) or _read_verdict(cache_dir, key)
            if hit is not None:
                self._memory[key] = hit
            return hit

    def remember(
        self, key: str, verdict: Verdict, cache_dir: str | os.PathLike | None = None
    ) -> Verdict:
        """Keep ``verdict`` for ``key`` as a probe's would be kept (what this process worked
        out of a probe's cubin, for the probe that works it out in the child)."""
        with self._lock:
            self._memory[key] = verdict
        _write_verdict(cache_dir, key, verdict)
        return verdict

    def cancel(self, key: str) -> bool:
        """Stop the probe of ``key`` (``LoweringJob.key(function)``) in flight, where no other
        probe waits for it: its child is killed (with what it runs) and it answers
        ``cancelled``, a verdict kept nowhere. Whether it was stopped."""
        with self._lock:
            flight = self._flights.get(key)
            if flight is None or flight.followers:
                return False
            flight.cancelled = True
            del self._flights[key]  # a later probe of the key starts its own
            asked = flight.asked
        if asked is not None:
            server, request_id = asked
            server.cancel(request_id)
        return True

    def assembled(self, key: str) -> bytes | None:
        """The cubin a probe of this process assembled for ``key``
        (``binary_usage.cubin_key``), if any: the compile's own ptxas run is then not needed."""
        with self._binaries_lock:
            return self._binaries.get(key)

    def lowered(self, key: str) -> Lowering | None:
        """The `Lowering` a probe of this process made of the job of ``key``
        (``LoweringJob.key(function)``), if it is still kept."""
        with self._binaries_lock:
            return self._lowerings.get(key)

    def _keep_builds(self, job_key: str, verdict: Verdict) -> Verdict:
        """The verdict without its cubin and lowering (verdicts are kept as JSON); those kept
        here, the last few only."""
        if not verdict.facts:
            return verdict
        binary, lowering = verdict.facts.get(BINARY), verdict.facts.get(LOWERED)
        with self._binaries_lock:
            if isinstance(binary, dict):
                key, cubin = binary.get("cubin_key"), binary.get("cubin")
                if isinstance(key, str) and isinstance(cubin, bytes):
                    _keep(self._binaries, key, cubin, KEPT_BINARIES)
            if isinstance(lowering, Lowering):
                _keep(self._lowerings, job_key, lowering, KEPT_LOWERINGS)
        facts = {k: v for k, v in verdict.facts.items() if k not in (BINARY, LOWERED)}
        return replace(verdict, facts=facts)

    def forget(self) -> None:
        """Drop the in-memory verdicts (files stay) and any memory of a helper that could not
        start."""
        with self._lock:
            self._memory.clear()
            self._broken = None

    def shutdown(self) -> None:
        """Stop the helper process (a later probe starts a new one)."""
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()

    def _drop(self, server: _ServerHandle) -> None:
        """Stop ``server``, and forget it if it is still the helper (another thread may have
        started the next one)."""
        with self._lock:
            if self._server is server:
                self._server = None
        server.close()

    def _handle(self) -> _ServerHandle:
        with self._lock:
            if self._server is not None and not self._server.usable():
                self._server.close()
                self._server = None
            if self._server is None:
                self._server = _ServerHandle.start()
            return self._server

    def _run(self, job: LoweringJob, timeout_s: float, function: str, flight: _Flight) -> Verdict:
        request = {"function": function, "job": job, "timeout_s": float(timeout_s)}
        try:
            pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # options that do not pickle: send the fields the passes use
            request["job"] = replace(job, options=_plain_options(job.options))
            try:
                pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                return Verdict("unavailable", reason=f"cannot send the job: {e}")
        for attempt in range(2):  # a server that died while idle is restarted once
            server = None
            try:
                with self._lock:
                    server = self._handle()
                reply = server.ask(request, timeout_s + GRACE_S, flight)
            except _ServerGone as e:
                if server is not None:
                    self._drop(server)
                if attempt == 0 and e.retry:
                    continue
                with self._lock:
                    if not self._server_ever_ready:
                        self._broken = str(e)  # do not wait for a helper that cannot start
                return Verdict("unavailable", reason=f"lowering guard unavailable: {e}")
            except TimeoutError:
                # The server enforces the limit itself; one that does not answer in time is
                # stuck with the child: take both down and treat the lowering as hung.
                assert server is not None
                self._drop(server)
                return Verdict(
                    "hang",
                    stage="guard",  # not the module's fault for sure: not cached
                    reason=hang_reason("", timeout_s) + " (the guard did not answer)",
                    timeout_s=timeout_s,
                )
            except Exception as e:  # anything else about the helper: unguarded, not wrong
                if server is not None:
                    self._drop(server)
                return Verdict("unavailable", reason=f"lowering guard unavailable: {e}")
            self._server_ever_ready = True
            return Verdict(**reply)
        raise AssertionError("unreachable")


@dataclass
class _Flight:
    """A probe in flight: who else waits for it, and where it was sent."""

    done: threading.Event = field(default_factory=threading.Event)
    verdict: Verdict | None = None
    followers: int = 0  # probes of the same key waiting for this one
    cancelled: bool = False
    asked: tuple | None = None  # (the server handle, the request's id), once sent


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_guard = LoweringGuard()
atexit.register(_guard.shutdown)


def guard() -> LoweringGuard:
    """The process-wide guard the drop-in uses."""
    return _guard


# -- verdict files ----------------------------------------------------------------------------
def _verdict_path(cache_dir: str | os.PathLike | None, key: str) -> Path | None:
    return None if cache_dir is None else Path(cache_dir) / f"{key}.json"


def _read_verdict(cache_dir: str | os.PathLike | None, key: str) -> Verdict | None:
    """The verdict stored for ``key``; None when there is none or what is there is not one
    (not a regular file, too large or deep, torn, of other types, stored under another key):
    probed again, and the file replaced."""
    path = _verdict_path(cache_dir, key)
    if path is None:
        return None
    try:
        record = readers.load(path)
    except (OSError, ValueError):  # missing, a FIFO, a device, torn, too deep
        return None
    if not isinstance(record, dict) or record.get("for") != key:
        return None  # foreign, or a verdict copied from another key's file
    fields = record.get("verdict")
    if not isinstance(fields, dict) or set(fields) - set(_VERDICT_TYPES) or "status" not in fields:
        return None
    for name, value in fields.items():
        types = _VERDICT_TYPES[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return None
    verdict = Verdict(**fields)
    return verdict if verdict.status in PERSISTED else None


_VERDICT_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,),
    "stage": (str,),
    "reason": (str,),
    "error_type": (str,),
    "message": (str,),
    "stderr": (str,),
    "wall_s": (int, float),
    "timeout_s": (int, float),
    "cached": (bool,),
    "facts": (dict,),
}


def _write_verdict(cache_dir: str | os.PathLike | None, key: str, verdict: Verdict) -> None:
    path = _verdict_path(cache_dir, key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            record = {"for": key, "verdict": asdict(replace(verdict, cached=False))}
            json.dump(record, f, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a probe in the next process


# -- helpers ----------------------------------------------------------------------------------
def _keep(kept: dict, key: str, value: Any, most: int) -> None:
    """``kept[key] = value``, the oldest dropped past ``most``."""
    kept[key] = value
    while len(kept) > most:
        kept.pop(next(iter(kept)))


_OPTION_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class _PlainOptions:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _plain_options(options: Any) -> _PlainOptions:
    return _PlainOptions(**{name: getattr(options, name, None) for name in _OPTION_FIELDS})


def _options_key(options: Any) -> str:
    try:
        fields = vars(options)
    except TypeError:
        fields = {name: getattr(options, name, None) for name in _OPTION_FIELDS}
    return repr(sorted((str(k), repr(v)) for k, v in fields.items()))


@functools.cache
def _versions() -> str:
    from ...pipeline import plancache

    try:
        from importlib.metadata import version

        triton_version = version("triton")
    except Exception:
        triton_version = "?"
    return f"triton {triton_version}; {plancache.code_version(('triton',))}"

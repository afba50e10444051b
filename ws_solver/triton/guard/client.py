"""The lowering guard: try Triton's lowering of an annotated module in a child process first.

Triton 3.6's warp-specialization lowering can hang (``pipeline`` spins forever on some
annotations) or take the process down on annotations it does not expect. A user's compile
must do neither, so before the drop-in lowers a partitioned module in its own process it asks
a helper process to lower the same text, under a time limit:

- The helper (the *server*) is one Python process per user process, started on the first
  warp-specialized compile (``python -c ... _serve()``), with Triton imported once. It exits
  when its parent does (end of its stdin) or after ``IDLE_S`` without work.
- For each probe the server forks a child (the server is single-threaded, so forking is
  safe and costs milliseconds). The child builds a fresh MLIR context, parses the text and
  runs ``run_after_partition`` one pass group at a time, telling the server which one it is
  in; its stdout/stderr go to a file whose tail comes back with the verdict.
- The server kills the child when the time limit passes (verdict ``hang``, naming the pass
  group that did not finish); a child that dies without an answer is a ``crash`` (naming
  the signal); a Python exception (``PassManager::run failed`` and the like) is an
  ``error`` with its MLIR diagnostics.

Verdicts are cached in memory and on disk by a digest of everything the lowering depends on
(annotated text, target, options, register rewrite, Hopper fix, Triton and ws_solver
versions), so an autotuning sweep or a second process probes each module once.

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
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ...core import readers
from ...core.envvars import without_activation
from ...core.processes import python_command
from .server import BINARY, IDLE_S, LOWERED, Lowering, Reader, hang_reason, send, send_bytes

DEFAULT_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 120.0  # importing Triton on a loaded machine; not the lowering's limit
GRACE_S = 15.0  # on top of a probe's limit, for the server to kill the child and answer
PROBE_FUNCTION = (
    "ws_solver.triton.guard.server:probe_lowering"  # "module:function", run in the child
)
PERSISTED = ("ok", "error", "hang", "crash")  # verdicts worth keeping across processes
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

    status: str  # "ok" | "error" | "hang" | "crash" | "unavailable"
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
    """Probes lowerings in a helper process, with verdicts cached in memory and on disk."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._server: _ServerHandle | None = None
        self._memory: dict[str, Verdict] = {}
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
        """Lower ``job`` in a child process within ``timeout_s``; cached by ``job.key()``."""
        function = function or PROBE_FUNCTION
        key = job.key(function)
        with self._lock:
            hit = self._memory.get(key) or _read_verdict(cache_dir, key)
            if hit is not None:
                self._memory[key] = hit
                return replace(hit, cached=True)
            if self._broken is not None:
                return Verdict("unavailable", reason=f"lowering guard unavailable: {self._broken}")
            verdict = self._keep_builds(key, self._run(job, timeout_s, function))
            if verdict.status in PERSISTED and verdict.stage != "guard":
                self._memory[key] = verdict
                _write_verdict(cache_dir, key, verdict)
            return verdict

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

    def _handle(self) -> _ServerHandle:
        if self._server is not None and not self._server.usable():
            self._server.close()
            self._server = None
        if self._server is None:
            self._server = _ServerHandle.start()
        return self._server

    def _run(self, job: LoweringJob, timeout_s: float, function: str) -> Verdict:
        request = {"function": function, "job": job, "timeout_s": float(timeout_s)}
        try:
            payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # options that do not pickle: send the fields the passes use
            request["job"] = replace(job, options=_plain_options(job.options))
            try:
                payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                return Verdict("unavailable", reason=f"cannot send the job: {e}")
        for attempt in range(2):  # a server that died while idle is restarted once
            try:
                server = self._handle()
                reply = server.ask(payload, timeout_s + GRACE_S)
            except _ServerGone as e:
                self.shutdown()
                if attempt == 0 and e.retry:
                    continue
                if not self._server_ever_ready:
                    self._broken = str(e)  # do not wait for a helper that cannot start again
                return Verdict("unavailable", reason=f"lowering guard unavailable: {e}")
            except TimeoutError:
                # The server enforces the limit itself; one that does not answer in time is
                # stuck with the child: take both down and treat the lowering as hung.
                self.shutdown()
                return Verdict(
                    "hang",
                    stage="guard",  # not the module's fault for sure: not cached
                    reason=hang_reason("", timeout_s) + " (the guard did not answer)",
                    timeout_s=timeout_s,
                )
            except Exception as e:  # anything else about the helper: unguarded, not wrong
                self.shutdown()
                return Verdict("unavailable", reason=f"lowering guard unavailable: {e}")
            self._server_ever_ready = True
            return Verdict(**reply)
        raise AssertionError("unreachable")


class _ServerGone(RuntimeError):
    """The helper is not there; ``retry``: it was idle, so starting another may help."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class _ServerHandle:
    """The parent's handle on one helper process (length-prefixed pickles over pipes)."""

    def __init__(self, proc: subprocess.Popen, log: Any) -> None:
        self.proc = proc
        self.log = log  # the server's own stderr (import errors), read when it fails
        self.owner = os.getpid()
        self.ready = False
        assert proc.stdout is not None
        self.reader = Reader(proc.stdout.fileno())

    @staticmethod
    def start() -> _ServerHandle:
        if not hasattr(os, "fork"):
            raise _ServerGone("os.fork is not available on this platform", retry=False)
        root = str(Path(__file__).resolve().parents[3])
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from ws_solver.triton.guard.server import _serve; _serve()"
        )
        log = tempfile.TemporaryFile()  # noqa: SIM115 (open for the helper's lifetime)
        proc = subprocess.Popen(
            python_command([root], code=code),  # the working directory out of sys.path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # its children die with it (killpg) and not with ^C
            close_fds=True,
            env=without_activation(),  # it builds what it is asked, never through the drop-in
        )
        handle = _ServerHandle(proc, log)
        # Not "" (this process's working directory, where `python -c` or a REPL puts it).
        sys_path = [p for p in sys.path if p]
        send(proc.stdin, {"sys_path": sys_path, "idle_s": IDLE_S})
        return handle

    def usable(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def ask(self, payload: bytes, timeout_s: float) -> dict:
        """Send one request and wait ``timeout_s`` for the answer (TimeoutError if none)."""
        if not self.ready:
            try:
                hello = self._receive(STARTUP_TIMEOUT_S, retry=False)
            except TimeoutError:
                raise _ServerGone(
                    f"the helper did not start in {STARTUP_TIMEOUT_S:g} s", retry=False
                ) from None
            if not hello.get("ready"):
                raise _ServerGone(f"the helper could not start: {hello.get('error')}", False)
            self.ready = True
        try:
            send_bytes(self.proc.stdin, payload)
        except OSError as e:  # it exited while idle (IDLE_S): start another
            raise _ServerGone(f"the helper is gone ({e})", retry=True) from e
        return self._receive(timeout_s, retry=False)

    def _receive(self, timeout_s: float, retry: bool) -> dict:
        try:
            return self.reader.next(time.monotonic() + timeout_s)
        except EOFError:
            self.proc.wait()
            raise _ServerGone(self._why_gone(), retry) from None

    def _why_gone(self) -> str:
        status = self.proc.returncode
        tail = ""
        with contextlib.suppress(OSError, ValueError):
            self.log.seek(0)
            tail = self.log.read().decode(errors="replace").strip().splitlines()[-1:]
            tail = tail[0] if tail else ""
        return f"the helper process ended (status {status})" + (f": {tail}" if tail else "")

    def close(self) -> None:
        if self.owner != os.getpid():  # a forked copy of the parent: not ours to stop
            return
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.log):
            with contextlib.suppress(Exception):
                stream.close()


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

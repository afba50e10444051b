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
import importlib
import json
import os
import pickle
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT_S = 60.0
STARTUP_TIMEOUT_S = 120.0  # importing Triton on a loaded machine; not the lowering's limit
GRACE_S = 15.0  # on top of a probe's limit, for the server to kill the child and answer
IDLE_S = 900.0  # an idle server exits; the next probe starts a new one
STDERR_TAIL = 16_000  # characters of the child's stderr that come back with a verdict
PROBE_FUNCTION = "ws_solver.triton.guard:probe_lowering"  # "module:function", run in the child

# What each stage of the probe is, for messages ("Triton's pipeline did not finish in 60 s").
STAGE_NAMES = {
    "start": "the probe's setup",
    "parse": "parsing the annotated module",
    "warp_specialize": "Triton's warp_specialize",
    "pipeline": "Triton's pipeline",
    "optimize_partition_warps": "Triton's optimize_partition_warps",
    "rewrite": "the post-pipeline rewrite (registers, Hopper fix)",
    "tail": "the rest of Triton's make_ttgir",
    "llir": "Triton's make_llir",
}
PERSISTED = ("ok", "error", "hang", "crash")  # verdicts worth keeping across processes


@dataclass(frozen=True)
class LoweringJob:
    """What the child lowers: everything ``run_after_partition`` and the rewrite depend on."""

    text: str  # the annotated partitioner output
    capability: int
    options: Any  # Triton's CUDAOptions (picklable), or any object with the fields used
    num_warps: int
    registers: tuple  # per specialized loop: ((partition id, registers), ...)
    apply_registers: bool
    hopper: bool  # apply ws_solver.triton.hopper's fix after pipelining (sm_90)
    overlap: bool = False  # sink wgmma waits after pipelining (sm_90, overlap.py)

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


def stage_name(stage: str) -> str:
    return STAGE_NAMES.get(stage, stage or "Triton's lowering")


def hang_reason(stage: str, timeout_s: float) -> str:
    return f"{stage_name(stage)} did not finish in {timeout_s:g} s"


def crash_reason(stage: str, status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            what = signal.Signals(sig).name
        except ValueError:
            what = f"signal {sig}"
        return f"{stage_name(stage)} crashed the process ({what})"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return f"{stage_name(stage)} ended the process (exit status {code})"


# -- the parent's side ------------------------------------------------------------------------
class LoweringGuard:
    """Probes lowerings in a helper process, with verdicts cached in memory and on disk."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._server: _ServerHandle | None = None
        self._memory: dict[str, Verdict] = {}
        self._broken: str | None = None  # why the helper cannot start (once known)
        self._server_ever_ready = False

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
            verdict = self._run(job, timeout_s, function)
            if verdict.status in PERSISTED and verdict.stage != "guard":
                self._memory[key] = verdict
                _write_verdict(cache_dir, key, verdict)
            return verdict

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
        self.reader = _Reader(proc.stdout.fileno())

    @staticmethod
    def start() -> _ServerHandle:
        if not hasattr(os, "fork"):
            raise _ServerGone("os.fork is not available on this platform", retry=False)
        root = str(Path(__file__).resolve().parents[2])
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from ws_solver.triton.guard import _serve; _serve()"
        )
        log = tempfile.TemporaryFile()  # noqa: SIM115 (open for the helper's lifetime)
        proc = subprocess.Popen(
            [sys.executable, "-c", code, root],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # its children die with it (killpg) and not with ^C
            close_fds=True,
        )
        handle = _ServerHandle(proc, log)
        _send(proc.stdin, {"sys_path": list(sys.path), "idle_s": IDLE_S})
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
            _send_bytes(self.proc.stdin, payload)
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
    path = _verdict_path(cache_dir, key)
    if path is None:
        return None
    try:
        record = json.loads(path.read_text())
        verdict = Verdict(**record)
    except (OSError, ValueError, TypeError):
        return None  # missing, torn or foreign: probe again
    return verdict if verdict.status in PERSISTED else None


def _write_verdict(cache_dir: str | os.PathLike | None, key: str, verdict: Verdict) -> None:
    path = _verdict_path(cache_dir, key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(replace(verdict, cached=False)), f, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a probe in the next process


# -- helpers ----------------------------------------------------------------------------------
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
    from .. import plancache

    try:
        from importlib.metadata import version

        triton_version = version("triton")
    except Exception:
        triton_version = "?"
    return f"triton {triton_version}; {plancache.code_version(('triton',))}"


def _send(stream: Any, obj: Any) -> None:
    _send_bytes(stream, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _send_bytes(stream: Any, data: bytes) -> None:
    stream.write(struct.pack("!Q", len(data)) + data)
    stream.flush()


def _write_fd(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack("!Q", len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


class _Reader:
    """Length-prefixed messages from a file descriptor, with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def next(self, deadline: float | None) -> Any:
        """The next message; EOFError at the end, TimeoutError past the deadline."""
        while True:
            if len(self.buf) >= 8:
                (size,) = struct.unpack("!Q", self.buf[:8])
                if len(self.buf) >= 8 + size:
                    data, self.buf = self.buf[8 : 8 + size], self.buf[8 + size :]
                    return pickle.loads(data)
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait == 0.0 and deadline is not None:
                raise TimeoutError
            readable, _, _ = select.select([self.fd], [], [], wait)
            if not readable:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                raise EOFError
            self.buf += chunk


# -- the helper process -----------------------------------------------------------------------
def _serve() -> None:
    """The helper's main loop: read a request, fork a child to lower it, answer."""
    requests = os.dup(0)
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints must not corrupt the answers
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    reader = _Reader(requests)
    try:
        init = reader.next(None)
    except EOFError:
        return
    for entry in reversed(init.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    idle_s = float(init.get("idle_s", IDLE_S))
    try:
        _preload()
        _send(answers, {"ready": True, "pid": os.getpid()})
    except Exception as e:
        _send(answers, {"ready": False, "error": f"{type(e).__name__}: {e}"})
        return
    while True:
        try:
            request = reader.next(time.monotonic() + idle_s)
        except (EOFError, TimeoutError):
            return
        verdict = _probe_in_child(request, close_in_child=(requests, answers.fileno()))
        try:
            _send(answers, verdict)
        except OSError:
            return


def _preload() -> None:
    """Import what every child needs, once, in the helper (children inherit it by fork)."""
    importlib.import_module("triton._C.libtriton")
    importlib.import_module("triton.backends.nvidia.compiler")
    importlib.import_module("ws_solver.triton.pipeline")
    importlib.import_module("ws_solver.triton.dropin")
    with contextlib.suppress(ImportError):
        importlib.import_module("ws_solver.triton.hopper")


def _probe_in_child(request: dict, close_in_child: tuple[int, ...]) -> dict:
    """Fork, lower in the child, and turn what happened into a Verdict's fields."""
    timeout_s = float(request["timeout_s"])
    fd_log, log_path = tempfile.mkstemp(prefix="ws_solver_probe_", suffix=".log")
    read_end, write_end = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_end)
            for fd in close_in_child:
                with contextlib.suppress(OSError):
                    os.close(fd)
            os.dup2(fd_log, 1)
            os.dup2(fd_log, 2)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _child(request, write_end)
        except BaseException:
            status = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
    os.close(write_end)
    os.close(fd_log)
    reader = _Reader(read_end)
    stage, outcome = "start", None
    deadline = start + timeout_s
    try:
        while outcome is None:
            message = reader.next(deadline)
            if message[0] == "stage":
                stage = message[1]
            else:
                outcome = message
    except TimeoutError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        outcome = ("hang",)
    except EOFError:
        outcome = None
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    wall = time.monotonic() - start
    stderr = _summarize_log(log_path)
    base = {"stage": stage, "stderr": stderr, "wall_s": wall, "timeout_s": timeout_s}
    if outcome is None:
        return {"status": "crash", "reason": crash_reason(stage, status), **base}
    if outcome[0] == "hang":
        return {"status": "hang", "reason": hang_reason(stage, timeout_s), **base}
    if outcome[0] == "ok":
        return {"status": "ok", **base}
    _, error_type, message = outcome
    return {
        "status": "error",
        "error_type": error_type,
        "message": message,
        "reason": error_reason(error_type, message, stderr),
        **base,
    }


def _child(request: dict, channel: int) -> None:
    def progress(stage: str) -> None:
        _write_fd(channel, ("stage", stage))

    module_name, _, attr = request["function"].partition(":")
    function = getattr(importlib.import_module(module_name), attr)
    try:
        function(request["job"], progress)
    except Exception as e:
        text = str(e).strip()
        _write_fd(channel, ("error", type(e).__name__, text.splitlines()[0] if text else ""))
        return
    _write_fd(channel, ("ok",))


_DIAGNOSTIC = re.compile(
    r"(error|warning|note|remark):|Assertion|LLVM ERROR|UNREACHABLE|signal|Stack dump|Traceback"
)


def _summarize_log(path: str) -> str:
    """What the child printed, without the module dumps of MLIR's crash reproducers: the
    diagnostic lines (errors, notes, failed assertions), then the last lines."""
    try:
        with open(path, "rb") as f:
            text = f.read(64 * STDERR_TAIL).decode(errors="replace")
    except OSError:
        text = ""
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    lines = text.splitlines()
    picked = []
    for i, line in enumerate(lines):
        if _DIAGNOSTIC.search(line):
            if "UNREACHABLE" in line and i > 0:  # llvm_unreachable's message comes first
                picked.append(lines[i - 1][:1000])
            picked.append(line[:1000])
    picked = picked[:100]
    head = "\n".join(picked)
    budget = max(0, STDERR_TAIL - len(head)) // 4
    tail = text[-budget:] if budget and text else ""
    return (head + ("\n--- last lines ---\n" + tail if tail else ""))[:STDERR_TAIL]


def error_reason(error_type: str, message: str, stderr: str) -> str:
    """The same one-line reason the drop-in gives for an in-process failure."""
    from .dropin import _reason_from

    return _reason_from(error_type, message, stderr)


# -- what the child runs ----------------------------------------------------------------------
def probe_lowering(job: LoweringJob, progress: Callable[[str], None]) -> None:
    """Parse ``job.text`` in a fresh context and lower it exactly as the drop-in would."""
    from types import SimpleNamespace

    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend

    from . import dropin
    from . import pipeline as tpipe

    progress("parse")
    context = ir.context()
    ir.load_dialects(context)
    backend = CUDABackend(GPUTarget("cuda", job.capability, 32))
    backend.load_dialects(context)
    module = tpipe.parse_module_text(job.text, context)
    plans = [
        SimpleNamespace(partitions=[SimpleNamespace(id=i, registers=r) for i, r in parts])
        for parts in job.registers
    ]
    hopper = dropin._hopper_fix() if job.hopper else None
    rewrite = dropin.post_pipeline_rewrite(
        job.capability,
        job.num_warps,
        plans,
        job.apply_registers,
        hopper,
        {"notes": []},
        overlap=job.overlap,
    )
    module = tpipe.run_after_partition(
        module, job.options, job.capability, {}, post_pipeline=rewrite, progress=progress
    )
    # Some partitioned modules pass make_ttgir and fail only when lowered to LLVM (e.g. two
    # WS loops whose partitions Triton gives different warp counts: setmaxnreg out of range).
    # The drop-in can still fall back at this point, so the probe goes one stage further.
    progress("llir")
    backend.make_llir(module, {}, job.options, job.capability)

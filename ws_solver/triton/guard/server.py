"""The lowering guard's helper process (see guard.py): its main loop, the child it forks per
probe, the verdict's reasons, and the length-prefixed pickles both sides exchange.

The helper is started as ``python -c "...; from ws_solver.triton.guard.server import _serve;
_serve()"``; it imports Triton once (`_preload`) and forks a child for each probe as its request
comes in (several run at once; `_Running`), which runs ``PROBE_FUNCTION`` (default
`probe_lowering`: the drop-in's lowering of the annotated text), and answers each request by
its id when its child ends, is killed at its limit, or is cancelled.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import re
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..rewrites.chain import FinalPtx, PostFacts, final_ptx, hopper_fix, post_pipeline
from ..toolchain import lowering_env
from ..toolchain.reasons import headline, reason_from
from ..toolchain.stock_defects import doubled_partition_offset
from ..toolchain.unlaunchable import unlaunchable

IDLE_S = 900.0  # an idle server exits; the next probe starts a new one
BINARY = "binary"  # a probe's facts: the cubin it assembled and its key (binary_usage.cubin_key)
LOWERED = "lowered"  # probe_binary's facts: its `Lowering` (the compile's stages take it)
STDERR_TAIL = 16_000  # characters of the child's stderr that come back with a verdict

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
    "stock": "stock Triton's make_ttgir",
    "ptx": "Triton's make_ptx",
    "ptxas": "ptxas",
    "nvdisasm": "nvdisasm (where the spill instructions sit)",
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


def send(stream: Any, obj: Any) -> None:
    send_bytes(stream, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def send_bytes(stream: Any, data: bytes) -> None:
    stream.write(struct.pack("!Q", len(data)) + data)
    stream.flush()


def _write_fd(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack("!Q", len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


class Reader:
    """Length-prefixed messages from a file descriptor, with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def next(self, deadline: float | None) -> Any:
        """The next message; EOFError at the end, TimeoutError past the deadline."""
        while True:
            message = self._parsed()
            if message is not None:
                return message[0]
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait == 0.0 and deadline is not None:
                raise TimeoutError
            readable, _, _ = select.select([self.fd], [], [], wait)
            if readable:
                self.fill()

    def fill(self) -> None:
        """Read what is there (the descriptor is readable); EOFError at the end."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError
        self.buf += chunk

    def messages(self) -> list:
        """The complete messages read so far."""
        out = []
        while (message := self._parsed()) is not None:
            out.append(message[0])
        return out

    def _parsed(self) -> tuple[Any] | None:
        if len(self.buf) >= 8:
            (size,) = struct.unpack("!Q", self.buf[:8])
            if len(self.buf) >= 8 + size:
                data, self.buf = self.buf[8 : 8 + size], self.buf[8 + size :]
                return (pickle.loads(data),)
        return None


# -- the helper process -----------------------------------------------------------------------
def _serve() -> None:
    """The helper's main loop: read requests, fork a child for each at once (several run side
    by side), answer each by its id as its child ends; a request to cancel kills its child."""
    requests = os.dup(0)
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints must not corrupt the answers
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    reader = Reader(requests)
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
        send(answers, {"ready": True, "pid": os.getpid()})
    except Exception as e:
        send(answers, {"ready": False, "error": f"{type(e).__name__}: {e}"})
        return
    running: dict[int, _Running] = {}  # by the read end of each child's channel
    try:
        _serve_requests(reader, answers, running, idle_s, (requests, answers.fileno()))
    finally:
        for child in running.values():  # the parent is gone: so are its probes
            child.kill()


def _serve_requests(
    reader: Reader, answers: Any, running: dict, idle_s: float, close_in_child: tuple
) -> None:
    idle_since = time.monotonic()
    while True:
        now = time.monotonic()
        if running:
            wait = max(0.0, min(c.deadline for c in running.values()) - now)
        else:
            wait = idle_since + idle_s - now
            if wait <= 0:
                return
        readable, _, _ = select.select([reader.fd, *running], [], [], wait)
        finished: list[tuple[_Running, dict]] = []
        if reader.fd in readable:
            try:
                reader.fill()
            except EOFError:
                return
            for request in reader.messages():
                if "cancel" in request:
                    child = next((c for c in running.values() if c.id == request["cancel"]), None)
                    if child is not None:
                        child.kill()
                        finished.append((running.pop(child.fd), child.cancelled()))
                else:
                    child = _Running.fork(request, close_in_child)
                    running[child.fd] = child
        for fd in readable:
            child = running.get(fd)
            if child is not None and child.read():
                finished.append((running.pop(fd), child.verdict()))
        now = time.monotonic()
        for fd, child in list(running.items()):
            if now >= child.deadline:
                child.kill()
                child.outcome = ("hang",)
                finished.append((running.pop(fd), child.verdict()))
        for child, verdict in finished:
            try:
                send(answers, {"id": child.id, "verdict": verdict})
            except OSError:
                return
        if finished and not running:
            idle_since = time.monotonic()


def _preload() -> None:
    """Import what every child needs, once, in the helper (children inherit it by fork)."""
    importlib.import_module("triton._C.libtriton")
    importlib.import_module("triton.backends.nvidia.compiler")
    importlib.import_module("ws_solver.triton.toolchain.make_ttgir")
    importlib.import_module("ws_solver.triton.rewrites.chain")
    with contextlib.suppress(ImportError):
        importlib.import_module("ws_solver.triton.rewrites.hopper")


class _Running:
    """One probe's child: forked at once, read as it reports, turned into a Verdict's fields.
    The child leads a process group of its own, so that a kill takes what it runs with it
    (ptxas, nvdisasm)."""

    def __init__(self, request: dict, pid: int, fd: int, log_path: str) -> None:
        self.id = request.get("id")
        self.timeout_s = float(request["timeout_s"])
        self.pid, self.fd, self.log_path = pid, fd, log_path
        self.reader = Reader(fd)
        self.start = time.monotonic()
        self.deadline = self.start + self.timeout_s
        self.stage = "start"
        self.outcome: tuple | None = None
        self.status: int | None = None

    @staticmethod
    def fork(request: dict, close_in_child: tuple[int, ...]) -> _Running:
        fd_log, log_path = tempfile.mkstemp(prefix="ws_solver_probe_", suffix=".log")
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 0
            try:
                with contextlib.suppress(OSError):
                    os.setpgid(0, 0)
                _die_with_parent()
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
        with contextlib.suppress(OSError):  # both sides, whichever runs first
            os.setpgid(pid, pid)
        os.close(write_end)
        os.close(fd_log)
        return _Running(request, pid, read_end, log_path)

    def read(self) -> bool:
        """Take what the child wrote; whether it is done (its outcome, or its end)."""
        try:
            self.reader.fill()
        except (EOFError, OSError):
            return True
        for message in self.reader.messages():
            if message[0] == "stage":
                self.stage = message[1]
            else:
                self.outcome = message
        return self.outcome is not None

    def kill(self) -> None:
        """The child and its process group killed, and reaped."""
        self._reap(kill=True)

    def _reap(self, kill: bool = False) -> None:
        """Reaped, once it ended (``kill``: killed first); what it started and left behind (a
        ptxas of its own) is killed before, while the child's pid, its group's id, cannot be
        anyone else's."""
        if self.status is not None:
            return
        if not kill and hasattr(os, "waitid"):  # ended, not yet reaped
            with contextlib.suppress(ChildProcessError, InterruptedError):
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
            kill = True
        if kill:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        _, self.status = os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def cancelled(self) -> dict:
        """The fields of a probe cancelled by the parent (never cached)."""
        self._summary()
        return {"status": "cancelled", "stage": self.stage, "reason": "cancelled"}

    def _summary(self) -> str:
        self._reap()
        return _summarize_log(self.log_path)

    def verdict(self) -> dict:
        """The Verdict's fields of what happened to the child."""
        stderr = self._summary()
        stage, outcome, status = self.stage, self.outcome, self.status
        assert status is not None
        wall = time.monotonic() - self.start
        base = {"stage": stage, "stderr": stderr, "wall_s": wall, "timeout_s": self.timeout_s}
        if outcome is None:
            return {"status": "crash", "reason": crash_reason(stage, status), **base}
        if outcome[0] == "hang":
            return {"status": "hang", "reason": hang_reason(stage, self.timeout_s), **base}
        if outcome[0] == "ok":
            facts = outcome[1] if len(outcome) > 1 and isinstance(outcome[1], dict) else {}
            return {"status": "ok", **base, **({"facts": facts} if facts else {})}
        _, error_type, message = outcome
        return {
            "status": "error",
            "error_type": error_type,
            "message": message,
            "reason": error_reason(error_type, message, stderr),
            **base,
        }


def _die_with_parent() -> None:
    """The calling process gets SIGKILL when the helper dies (Linux; elsewhere a no-op): a
    helper killed outright takes its children with it."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child(request: dict, channel: int) -> None:
    def progress(stage: str) -> None:
        _write_fd(channel, ("stage", stage))

    module_name, _, attr = request["function"].partition(":")
    function = getattr(importlib.import_module(module_name), attr)
    try:
        facts = function(request["job"], progress)
    except Exception as e:
        _write_fd(channel, ("error", type(e).__name__, headline(e)))
        return
    # A probe may return facts about what it built (probe_binary, probe_stock): plain data.
    _write_fd(channel, ("ok", facts) if isinstance(facts, dict) else ("ok",))


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
    return reason_from(error_type, message, stderr)


# -- what the child runs ----------------------------------------------------------------------
def probe_lowering(job: Any, progress: Callable[[str], None]) -> None:
    """Parse ``job.text`` in a fresh context and lower it exactly as the drop-in would."""
    _lower(job, progress)


@dataclass(frozen=True)
class Lowering:
    """What probe_binary's lowering made, as the compile's own ttgir, llir and ptx stages
    would make it of the same module (issue 49: the compile then lowers once)."""

    ttgir: str  # the ttgir stage's module, printed (what Triton keeps as the .ttgir)
    llir: str  # make_llir's
    ptx: str  # make_ptx's, before `final_ptx`
    ttgir_metadata: dict  # what each stage set in Triton's metadata
    llir_metadata: dict
    ptx_metadata: dict
    post: PostFacts | None  # None: stock's make_ttgir, no post-pipeline stage
    final: FinalPtx | None = None  # `final_ptx` of ``ptx``, where the release applies
    # What the lowering read besides its inputs, in the child (lowering_env.fingerprint()).
    environment: str = field(default_factory=lowering_env.fingerprint)


def probe_binary(job: Any, progress: Callable[[str], None]) -> dict:
    """`probe_lowering`, then on to PTX and ptxas: whether the kernel came out
    warp-specialized and its registers and spills (the drop-in's decision check), its
    cubin and its `Lowering`."""
    backend, ttgir, llir, metadata, post, ttgir_metadata = _lower(job, progress)
    ptx_metadata: dict = {}
    ptx = _make_ptx(backend, job, llir, ptx_metadata, progress)
    # The PTX the compile will assemble: with the per-warp-group release where it applies
    # (kernel_compile's `_wants_release`), so that ptxas's count is the kept binary's.
    released = job.release_per_warp_group and job.capability // 10 == 9 and bool(post.lowered)
    take_turns = getattr(job, "take_turns", False)
    final = final_ptx(ptx, job.num_warps, post.ring_depth, take_turns) if released else None
    texts = [ptx] if final is None else [final.ptx, final.unreleased]
    facts = _assembled(backend, job, _specialized(ttgir), texts, progress)
    post_facts = post.facts()
    lowering = Lowering(ttgir, llir, ptx, ttgir_metadata, metadata, ptx_metadata, post_facts, final)
    return {**facts, LOWERED: lowering}


def probe_binary_sass(job: Any, progress: Callable[[str], None]) -> dict:
    """`probe_binary`, and where its cubin's spill instructions sit (nvdisasm)."""
    return _with_loop_spills(probe_binary(job, progress), progress)


def probe_stock_sass(job: Any, progress: Callable[[str], None]) -> dict:
    """`probe_stock`, and where its cubin's spill instructions sit (nvdisasm)."""
    return _with_loop_spills(probe_stock(job, progress), progress)


def _with_loop_spills(facts: dict, progress: Callable[[str], None]) -> dict:
    """``facts`` with ``loop_spills``: the SASS's counts (None where it cannot be read)."""
    from ..toolchain.binary_usage import UsageUnavailable, cubin_loop_spills

    progress("nvdisasm")
    try:
        spills: dict | None = cubin_loop_spills(facts[BINARY]["cubin"]).to_dict()
    except UsageUnavailable:
        spills = None
    return {**facts, "loop_spills": spills}


def probe_stock(job: Any, progress: Callable[[str], None]) -> dict:
    """Stock Triton's own make_ttgir on ``job.text`` (the kernel's TTIR), then LLVM, PTX and
    ptxas: the decision Triton makes for the kernel without ws_solver, and what it costs in
    registers, its cubin and its `Lowering`. An exception is stock's own failure on the
    kernel."""
    backend, context = _backend(job)
    progress("stock")
    from ..toolchain import make_ttgir as tpipe

    module = tpipe.parse_module_text(job.text, context)
    ttgir_metadata: dict = {}
    module = backend.make_ttgir(module, ttgir_metadata, job.options, job.capability)
    ttgir = str(module)
    specialized = _specialized(ttgir)
    # A stock kernel that computes with another tile's rows is no candidate (stock_defects).
    defect = doubled_partition_offset(ttgir) if specialized else None
    if defect:
        raise RuntimeError(defect)
    progress("llir")
    metadata: dict = {}
    llir = backend.make_llir(module, metadata, job.options, job.capability)
    # A stock kernel that would trap at launch is no candidate to keep (decision_check).
    why = unlaunchable(metadata, str(llir))
    if why:
        raise RuntimeError(f"stock's kernel: {why}")
    ptx_metadata: dict = {}
    ptx = _make_ptx(backend, job, llir, ptx_metadata, progress)
    facts = _assembled(backend, job, specialized, [ptx], progress)
    lowering = Lowering(ttgir, llir, ptx, ttgir_metadata, metadata, ptx_metadata, None)
    return {**facts, LOWERED: lowering}


def _backend(job: Any) -> tuple[Any, Any]:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend

    context = ir.context()
    ir.load_dialects(context)
    backend = CUDABackend(GPUTarget("cuda", job.capability, 32))
    backend.load_dialects(context)
    return backend, context


def _specialized(ttgir: str) -> bool:
    return "ttg.warp_specialize(" in ttgir


def _lower(job: Any, progress: Callable[[str], None]) -> tuple[Any, str, Any, dict, Any, dict]:
    """(backend, the TTGIR, LLVM IR, metadata of make_llir, the post-pipeline stage, metadata
    of the ttgir stage) of ``job.text`` lowered."""
    from ..toolchain import make_ttgir as tpipe

    progress("parse")
    backend, context = _backend(job)
    module = tpipe.parse_module_text(job.text, context, getattr(job, "located", False))
    rewrite = post_pipeline(
        job.capability,
        job.num_warps,
        job.registers,
        job.apply_registers,
        job.overlap,
        hopper_fix() if job.hopper else None,
        job.release_per_warp_group,
        getattr(job.options, "num_stages", None),
    )
    ttgir_metadata: dict = {}
    module = tpipe.run_after_partition(
        module, job.options, job.capability, ttgir_metadata, rewrite, progress
    )
    ttgir = str(module)  # before make_llir's passes change the module
    # Some partitioned modules pass make_ttgir and fail only when lowered to LLVM (e.g. two
    # WS loops whose partitions Triton gives different warp counts: setmaxnreg out of range).
    # The drop-in can still fall back at this point, so the probe goes one stage further.
    progress("llir")
    metadata: dict = {}
    llir = backend.make_llir(module, metadata, job.options, job.capability)
    why = unlaunchable(metadata, str(llir))
    if why:
        raise RuntimeError(why)
    return backend, ttgir, llir, metadata, rewrite, ttgir_metadata


def _make_ptx(backend: Any, job: Any, llir: Any, metadata: dict, progress: Callable) -> str:
    """Triton's make_ptx of ``llir``."""
    progress("ptx")
    return backend.make_ptx(str(llir), metadata, job.options, job.capability)


def _assembled(backend: Any, job: Any, specialized: bool, ptx: list, progress: Callable) -> dict:
    """The first of the ``ptx`` texts (the compile's final PTX, then Triton's own where the
    rewrite changed it; None: not there) that ptxas takes: the build's facts, and its
    cubin. Not where its spill instructions sit: the decision check reads that only where
    it compares two spilling builds (dropin/builds.py)."""
    from ..toolchain.binary_usage import assemble, cubin_key

    texts = [text for text in ptx if text is not None]
    progress("ptxas")
    for index, text in enumerate(texts):
        try:  # ptxas rejecting the rewrite: Triton's own PTX, as kernel_compile._cubin does
            cubin, usage = assemble(backend, text, job.options, job.capability, sass=False)
            break
        except Exception:
            if index == len(texts) - 1:
                raise
    # The cubin goes back too: the compile reuses it for the same PTX (client.assembled).
    key = cubin_key(text, job.capability, job.options)
    binary = {"cubin": cubin, "cubin_key": key}
    facts = {"specialized": specialized, "usage": usage.to_dict(), "cubin_key": key}
    return {**facts, BINARY: binary}

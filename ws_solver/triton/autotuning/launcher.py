"""The GPU side of ``ws_solver.triton.autotune``: one build of a ``@triton.jit`` kernel per
candidate, launched through Triton's own JIT, checked with torch and timed with do_bench.

Each candidate gets its own in-memory kernel cache: while it launches, the JIT function's
``device_caches`` (and the ``cache`` of any ``triton.autotune`` layer below) are swapped for
the candidate's, so Triton binds arguments and launches exactly as usual. When the JIT is
about to compile (``knobs.runtime.jit_cache_hook``), the drop-in is enabled with the
candidate's strategy and knobs until the launch returns; it compiles into that strategy's own
Triton cache directory. Everything here holds one process-wide lock: the knobs are global.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from ...core.candidates import Candidate
from ..toolchain import versions
from .tuning import tolerance_for

_LOCK = threading.RLock()


def layers(fn: Any) -> tuple[Any, list[Any]]:
    """(the JITFunction under ``fn``, the ``triton.autotune`` layers between)."""
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    tuners = []
    while not isinstance(fn, JITFunction):
        if isinstance(fn, Autotuner):
            tuners.append(fn)
        inner = getattr(fn, "fn", None)
        if inner is None or inspect.isfunction(fn):
            raise TypeError(f"{fn!r} is not a @triton.jit kernel (or a decorator over one)")
        fn = inner
    return fn, tuners


def default_num_stages() -> int:
    from triton.backends.nvidia.compiler import CUDAOptions

    return CUDAOptions.num_stages


class TritonLauncher:
    """Builds and launches ``fn`` per candidate (see the module docstring)."""

    def __init__(self, fn: Any, enable_options: Mapping[str, Any] | None = None) -> None:
        self.fn = fn
        self.jit, self.tuners = layers(fn)
        self.enable_options = dict(enable_options or {})
        self._constexprs = [p.name for p in self.jit.params if p.is_constexpr]
        self._caches: dict[str, tuple[Any, list[dict]]] = {}

    # what the kernel is ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.jit.fn.__name__

    def unavailable(self) -> str | None:
        return unavailable()

    def identity(self) -> dict:
        import triton

        return {
            "name": self.name,
            "source": self.jit.cache_key,
            "device": device_name(),
            "triton": triton.__version__,
        }

    def constexprs(self) -> list[str]:
        return self._constexprs

    def check_candidates(self, candidates: tuple[Candidate, ...]) -> None:
        """ValueError for candidates this stack of decorators cannot build."""
        if self.tuners and any(c.stage_delta for c in candidates):
            raise ValueError(
                "num_stages deltas (~s+N, ~s-N) cannot go above @triton.autotune, whose configs "
                "set num_stages: list the stages in the configs, or put "
                "ws_solver.triton.autotune below @triton.autotune"
            )

    # building and launching -----------------------------------------------------------------
    def launch(self, candidate: Candidate, args: tuple, kwargs: dict) -> Any:
        """``fn.run`` with the candidate's in-memory caches swapped in; a compile on the way
        runs under the candidate's drop-in settings. Plain try/finally: this is the hot path
        of every launch after tuning."""
        from triton import knobs

        kwargs = self._with_stages(candidate, kwargs)
        own, own_tuned = self._own(candidate.name)
        with _LOCK:
            saved, saved_tuned = self.jit.device_caches, [t.cache for t in self.tuners]
            previous = knobs.runtime.jit_cache_hook
            scope = _CompileScope(self, candidate, previous)
            self.jit.device_caches = own
            for tuner, cache in zip(self.tuners, own_tuned, strict=True):
                tuner.cache = cache
            knobs.runtime.jit_cache_hook = scope.hook
            try:
                return self.fn.run(*args, **kwargs)
            finally:
                knobs.runtime.jit_cache_hook = previous
                self.jit.device_caches = saved
                for tuner, cache in zip(self.tuners, saved_tuned, strict=True):
                    tuner.cache = cache
                scope.close()

    def _own(self, name: str) -> tuple[Any, list[dict]]:
        own = self._caches.get(name)
        if own is None:
            own = self._caches[name] = (
                defaultdict(self.jit.create_binder),
                [{} for _ in self.tuners],
            )
        return own

    def _with_stages(self, candidate: Candidate, kwargs: dict) -> dict:
        if not candidate.stage_delta:
            return kwargs
        base = kwargs.get("num_stages") or default_num_stages()
        stages = candidate.num_stages(base)
        if stages < 1:
            raise ValueError(f"{candidate.name}: num_stages {base}{candidate.stage_delta:+d} < 1")
        return {**kwargs, "num_stages": stages}

    def describe(self, kernel: Any) -> dict:
        if hasattr(kernel, "result"):  # an async compile's future
            kernel = kernel.result()
        cubin = (getattr(kernel, "asm", None) or {}).get("cubin")
        report = getattr(getattr(kernel, "metadata", None), "ws_solver", None)
        return {
            "binary": hashlib.sha256(cubin).hexdigest()[:16] if isinstance(cubin, bytes) else None,
            "strategy_used": report.get("strategy_used") if isinstance(report, dict) else None,
        }

    # tensors (torch) ----------------------------------------------------------------------
    def tensors(self, nargs: Mapping[str, Any]) -> dict[str, Any]:
        import torch

        out = {}
        for name, value in nargs.items():
            base = getattr(value, "base", None) if hasattr(value, "block_shape") else None
            if isinstance(value, torch.Tensor):
                out[name] = value
            elif isinstance(base, torch.Tensor):
                out[name] = base
        return out

    def snapshot(self, tensor: Any) -> Any:
        return tensor.clone()

    def differs(self, a: Any, b: Any) -> bool:
        return not bool(_bytes(a).equal(_bytes(b)))

    def poison(self, tensor: Any) -> None:
        """NaN; for fp8, 0x7f bytes (NaN in e4m3fn and e5m2); integers: their maximum."""
        import torch

        if tensor.dtype == torch.bool:
            return
        if not tensor.dtype.is_floating_point:
            tensor.fill_(torch.iinfo(tensor.dtype).max)
        elif tensor.element_size() == 1:
            tensor.view(torch.uint8).fill_(0x7F)
        else:
            tensor.fill_(float("nan"))

    def disagreement(self, ref: Any, out: Any, tolerance: float | None) -> str | None:
        return disagreement(ref, out, tolerance)

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()


def batch_timer(target_ms: float, warm_ms: float = 0.0) -> Callable[[Callable[[], None]], float]:
    """A ``call -> ms`` timer over back-to-back launches filling about ``target_ms`` (CUDA
    events around the batch, after one untimed launch): the rate a kernel runs at when called
    again and again, without ``do_bench``'s L2 flush before each launch. Two builds a few
    percent apart read in a different order under the two timers often enough to matter
    (measured mode's picks against the H100 bench's batches, 2026-12-07). ``warm_ms``: the
    same call launched for about that long, untimed and with no gap, right before the timed
    batch, so the batch reads the power state the kernel itself brings the GPU to
    (docs/dropin.md, "The power state"), not the one the previous batch left."""

    def timer(call: Callable[[], None]) -> float:
        import torch

        call()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        once = max(start.elapsed_time(end), 1e-3)
        for _ in range(min(BATCH_MAX, int(warm_ms / once))):
            call()
        count = max(BATCH_MIN, min(BATCH_MAX, int(target_ms / once)))
        start.record()
        for _ in range(count):
            call()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / count

    return timer


BATCH_MIN, BATCH_MAX = 3, 1000  # launches in one batch_timer batch


def _bytes(tensor: Any) -> Any:
    import torch

    return tensor.contiguous().reshape(-1).view(torch.uint8)


# Elements compared at once: a float64 copy of each output is 128 MiB, whatever their size
# (a whole 8192x8192 comparison took 3.6 GiB above the arguments, issue 48's H100 sweep).
CHUNK = 1 << 24


def disagreement(ref: Any, out: Any, tolerance: float | None = None) -> str | None:
    """Why ``out`` does not match ``ref``: a NaN where the other has none (an element one of
    them did not write), a different infinity, or a relative error in the 2-norm above the
    dtype's tolerance (``tuning.TOLERANCE``; integers must be equal). None when they match.
    Compared ``CHUNK`` elements at a time, in float64."""
    import torch

    if ref.shape != out.shape or ref.dtype != out.dtype:
        return f"shape/dtype {tuple(out.shape)} {out.dtype} != {tuple(ref.shape)} {ref.dtype}"
    flat_ref, flat_out = ref.reshape(-1), out.reshape(-1)
    if not ref.dtype.is_floating_point:
        wrong = sum(
            int((flat_ref[i : i + CHUNK] != flat_out[i : i + CHUNK]).sum().item())
            for i in range(0, ref.numel(), CHUNK)
        )
        return f"{wrong} of {ref.numel()} elements differ" if wrong else None
    unwritten, infinities_differ, norm2, error2 = 0, False, 0.0, 0.0
    for i in range(0, ref.numel(), CHUNK):
        r, o = flat_ref[i : i + CHUNK].double(), flat_out[i : i + CHUNK].double()
        nan = torch.isnan(r)
        unwritten += int((nan != torch.isnan(o)).sum().item())
        r, o = r[~nan], o[~nan]
        inf = torch.isinf(r) | torch.isinf(o)
        infinities_differ |= bool((r[inf] != o[inf]).any().item())
        r, o = r[~inf], o[~inf]
        norm2 += float(torch.dot(r, r).item())
        error2 += float(torch.dot(o - r, o - r).item())
    if unwritten:
        return f"{unwritten} of {ref.numel()} elements are NaN in one output only"
    if infinities_differ:
        return "infinities differ"
    limit = tolerance_for(ref.dtype, tolerance)
    error = error2**0.5 / (norm2**0.5 if norm2 > 0 else 1.0)
    if error > limit:
        return f"relative error {error:.3g} > {limit:g} ({str(ref.dtype).removeprefix('torch.')})"
    return None


def build_scope(
    candidate: Candidate, enable_options: Mapping[str, Any]
) -> contextlib.AbstractContextManager:
    """The drop-in settings a candidate's build compiles under (its strategy, its knobs, the
    tuner's ``enable_options``, in-memory kernels left alone): the Triton cache folder they
    name is where another process's build of the same call is found (``ws_solver-<strategy>-
    <digest>`` under ``enable_options["cache_dir"]`` or Triton's cache folder)."""
    from ..dropin.switch import partitioner

    keywords = {**enable_options, **candidate.enable_keywords(), "reset_caches": False}
    return partitioner(candidate.plan, **keywords)


class _CompileScope:
    """A ``jit_cache_hook`` that enables the drop-in for ``candidate`` when the JIT is about to
    compile the launcher's kernel; ``close()`` restores what was there."""

    def __init__(self, launcher: TritonLauncher, candidate: Candidate, previous: Any) -> None:
        self.launcher, self.candidate, self.previous = launcher, candidate, previous
        self.scope: contextlib.AbstractContextManager | None = None

    def hook(self, *, fn: Any, **kw: Any) -> bool:
        if self.previous is not None and self.previous(fn=fn, **kw):
            return True
        if fn.jit_function is self.launcher.jit and self.scope is None:
            self.scope = build_scope(self.candidate, self.launcher.enable_options)
            self.scope.__enter__()
        return False

    def close(self) -> None:
        if self.scope is not None:
            self.scope.__exit__(None, None, None)
            self.scope = None


# -- the machine -------------------------------------------------------------------------------
def unavailable() -> str | None:
    """Why kernels cannot be tuned in this process (no torch, no CUDA GPU, no Triton driver);
    None when they can."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible"
    try:
        from triton.runtime.driver import driver

        target = driver.active.get_current_target()
    except Exception as e:
        return f"Triton has no active GPU driver ({type(e).__name__}: {e})"
    if target.backend != "cuda":
        return f"the GPU is {target.backend}, not CUDA"
    try:
        versions.installed()
    except versions.UnsupportedTritonVersion as e:
        return str(e)
    return None


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name(torch.cuda.current_device())

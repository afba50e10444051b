"""The drop-in's measured mode: ``enable("measured")`` or ``WS_SOLVER=measured``.

For a program that does not touch its kernels: at the first launch of a warp-specialized
``@triton.jit`` kernel per specialization (its constexprs and launch options, the other
arguments' dtypes; the kernel's source, the device and the Triton version key the on-disk
record), stock Triton's kernel, ``optimal``'s and the unspecialized one are built, each is
run once and checked against the unspecialized reference on the launch's own arguments, the
ones that agree are timed in interleaved rounds and the fastest is kept, in memory and on
disk (``tunecache``), so the next process does not time again. It is ``autotune``'s
procedure (``tuning.Tuning``) with stock's kernel as the default answer:

- The arguments come out as they went in: every tensor the launch passes (a descriptor's
  base too) is copied once before the first check and written back before each check and
  after the last timing (``RestoringHooks``); the timed launches run back to back. The copy
  is the extra device memory, reported as ``extra_bytes`` with the first launch's seconds.
- Where nothing can be timed (no GPU, ``WS_SOLVER_AUTOTUNE=0``, a CUDA graph being captured)
  or the reference cannot be checked (a kernel that reads what it writes), stock's kernel is
  launched, and a warning says so once per kernel.
- ``launches`` routes the launches here; compiles outside a launch build stock's kernel.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.candidates import MEASURED_CANDIDATES, MEASURED_DEFAULT
from ..dropin.session import Session
from .autotuner import Autotuner, WSTuningWarning
from .launcher import batch_timer
from .tuning import Call, Hooks, TuningReport

# A first timing round drops candidates this much slower than its fastest, when more than
# tuning.DROP_ABOVE distinct binaries are to be timed: the first launch's time grows with the
# candidates, not with their square.
DROP_BEHIND = 0.10
# The timer: back-to-back launches filling BATCH_MS (`launcher.batch_timer`), ROUNDS
# interleaved rounds, then up to SETTLE_ROUNDS more of the two fastest while they are a close
# call (`tuning.close_call`): the fixed 3 rounds of `do_bench` (L2 flushed before each
# launch) kept a binary 6% slower than the faster of stock's and optimal's on 3 of 165 H100
# configs (2026-12-07-measured-candidates-h100), its rounds 5-10% apart.
BATCH_MS = 25.0
# Each timed batch comes right after WARM_MS of the same kernel, untimed: the batch reads the
# power state that kernel holds the GPU in when launched again and again (docs/dropin.md,
# "The power state"), whatever candidate ran before it.
WARM_MS = 100.0
ROUNDS = 5
SETTLE_ROUNDS = 6


@dataclass
class RestoringHooks(Hooks):
    """Every tensor argument saved once, at tuning's first launch, and written back before
    each checking launch and at the end (``before(reset_only=True)``); nothing is read and
    written at once, so the outputs tuning finds are poisoned for the checks."""

    tensors: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    originals: dict = field(default_factory=dict)
    copied_bytes: int = 0
    _timing: bool = False

    def before(self, nargs: Mapping[str, Any], reset_only: bool = False) -> None:
        assert self.tensors is not None
        if not self.originals and not reset_only:
            self.originals = {n: t.clone() for n, t in self.tensors(nargs).items()}
            self.copied_bytes = sum(t.numel() * t.element_size() for t in self.originals.values())
        if reset_only or not self._timing:
            self.restore(nargs)

    def after(self, nargs: Mapping[str, Any], exception: BaseException | None = None) -> None:
        """Nothing: the next check's ``before`` (or the end) writes the arguments back."""

    def timing(self) -> None:
        self._timing = True

    def restore(self, nargs: Mapping[str, Any]) -> None:
        if not self.originals:
            return
        assert self.tensors is not None
        current = self.tensors(nargs)
        for name, saved in self.originals.items():
            current[name].copy_(saved)

    def finish(self, nargs: Mapping[str, Any]) -> None:
        """Tuning is over: the arguments back, the copies freed."""
        self.restore(nargs)
        self.originals, self._timing = {}, False


class Measurer(Autotuner):
    """One kernel's measured choices (an ``Autotuner`` over ``candidates``, by default
    ``MEASURED_CANDIDATES``, stock's kernel its default)."""

    def __init__(
        self,
        jit: Any,
        arg_names: Sequence[str],
        enable_options: Mapping[str, Any],
        launcher: Any = None,
        timer: Callable[[Callable[[], None]], float] | None = None,
        candidates: Sequence[str] = MEASURED_CANDIDATES,
    ) -> None:
        super().__init__(
            jit,
            arg_names,
            candidates=candidates,
            default=MEASURED_DEFAULT,
            hooks=RestoringHooks(),
            enable_options=enable_options,
            launcher=launcher,
            timer=timer or batch_timer(BATCH_MS, WARM_MS),
            rounds=ROUNDS,
            drop_behind=DROP_BEHIND,
            settle_rounds=SETTLE_ROUNDS,
        )
        assert isinstance(self.hooks, RestoringHooks)
        self.hooks.tensors = self.launcher.tensors

    def _tune(
        self, name: str, key: tuple[str, ...], call: Call, device: str
    ) -> tuple[TuningReport, Any]:
        hooks = self.hooks
        assert isinstance(hooks, RestoringHooks)
        start = time.perf_counter()
        try:
            report, winner = super()._tune(name, key, call, device)
        finally:
            hooks.finish(call.nargs)  # also when a launch raised: the arguments come back
        report.extra_bytes = hooks.copied_bytes
        report.total_s = round(time.perf_counter() - start, 3)
        return report, winner

    def _not_tuning(self) -> str | None:
        why = super()._not_tuning()
        if why is None and _capturing():
            return "a CUDA graph is being captured"
        return why

    def _warn(self, message: str) -> None:
        text = message.replace("not tuning", "not measuring", 1)
        warnings.warn(f"ws_solver measured: {text}", WSTuningWarning, stacklevel=5)


def measurer(jit: Any, session: Session) -> Measurer:
    """The measurer of one kernel under a measured session's settings."""
    candidates = session.settings.candidates or MEASURED_CANDIDATES
    return Measurer(jit, jit.arg_names, build_options(session), candidates=candidates)


def build_options(session: Session) -> dict[str, Any]:
    """The ``enable()`` keywords every build of a measured session is made with (the strategy
    and the knobs are the candidate's)."""
    s = session.settings
    return {
        "solve": s.solve,
        "apply_registers": s.apply_registers,
        "lowering_timeout": s.lowering_timeout,
        "partition_timeout": s.partition_timeout,
        "check_decision": s.check_decision,
        "parallel_builds": s.parallel_builds,
        "skip": s.skip,
        "cache_dir": session.cache_base,
        "report_file": session.report_file,
    }


def _capturing() -> bool:
    """Whether this thread's CUDA stream is being captured into a graph (a launch there is
    recorded, not run: nothing can be checked or timed)."""
    try:
        import torch
    except ImportError:  # no torch: nothing is captured (and the launcher says it cannot tune)
        return False
    return bool(torch.cuda.is_available() and torch.cuda.is_current_stream_capturing())

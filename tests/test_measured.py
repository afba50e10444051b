"""Measured mode (``enable("measured")``) on the CPU: the choice with a fake launcher and
timer (stock's kernel the default, the arguments back as they were, the extra memory), the
routing of launches while enabled, and what a compile outside a launch builds."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from test_autotune import ARGS, FakeLauncher, FakeTimer, T, double  # noqa: E402
from triton_util import compile_corpus_kernel  # noqa: E402

import ws_solver.triton as wst  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402
from ws_solver.core.candidates import MEASURED_CANDIDATES  # noqa: E402
from ws_solver.triton.autotuning import autotuner, measured, tuning  # noqa: E402
from ws_solver.triton.autotuning.autotuner import WSTuningWarning  # noqa: E402
from ws_solver.triton.autotuning.measured import Measurer, RestoringHooks  # noqa: E402
from ws_solver.triton.dropin import environ, launches  # noqa: E402

pytestmark = pytest.mark.triton


class Sized(T):
    """A fake tensor that counts its copies and knows its size."""

    copies = 0

    def numel(self) -> int:
        return len(self.data)

    def element_size(self) -> int:
        return 4

    def clone(self) -> Sized:
        return Sized(self.data, self.dtype)

    def copy_(self, other: T) -> None:
        Sized.copies += 1
        super().copy_(other)


class SizedLauncher(FakeLauncher):
    def tensors(self, nargs: dict) -> dict:
        return {k: v for k, v in nargs.items() if isinstance(v, T)}


def scratch_x(nargs: dict) -> None:
    """Writes its output and uses its input as scratch space (as some kernels do)."""
    double(nargs)
    nargs["x"].data[:] = [-1.0] * len(nargs["x"].data)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(autotuner.SWITCH_ENV, raising=False)
    monkeypatch.delenv("TRITON_PRINT_AUTOTUNING", raising=False)


def make(kernels: dict, ms: dict) -> tuple[Measurer, SizedLauncher, FakeTimer]:
    launcher = SizedLauncher(kernels)
    timer = FakeTimer(launcher, ms)
    names = ("stock", "optimal", "none")
    return (
        Measurer(None, ARGS, {}, launcher=launcher, timer=timer, candidates=names),
        launcher,
        timer,
    )


def test_the_fastest_that_agrees_wins_and_the_arguments_come_back() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", scratch_x)}
    tuner, launcher, _ = make(kernels, {"stock": 2.0, "optimal": 1.0, "none": 3.0})
    assert [c.name for c in tuner.candidates] == ["stock", "optimal", "none"]
    x, out = Sized([1.0, 2.0, 3.0]), Sized([7.0] * 3)
    tuner[(1,)](x, out, 3, BLOCK=32)
    report = autotuner.last_tuning_report()
    assert report.winner == "optimal" and report.tuned
    assert report.extra_bytes == 2 * 3 * 4  # x and out, copied once
    # The real launch ran the winner on the arguments as they were before tuning: the
    # unspecialized candidate's scratch writes to x were undone.
    assert x.data == [1.0, 2.0, 3.0] and out.data == [2.0, 4.0, 6.0]
    assert launcher.launches[-1] == "optimal"


def test_timed_launches_run_back_to_back() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", double)}
    tuner, launcher, timer = make(kernels, {"stock": 2.0, "optimal": 1.0, "none": 3.0})
    Sized.copies = 0
    tuner[(1,)](Sized([1.0, 2.0]), Sized([0.0, 0.0]), 2, BLOCK=32)
    timed = len(timer.order)
    # The copies: the reference's two runs and each of the three checks (two tensors each),
    # and the end; none around the timed launches.
    assert timed >= 3 and Sized.copies == 2 * (2 + 3 + 1)


def test_an_interrupted_tuning_still_gives_the_arguments_back() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", double)}
    tuner, _, timer = make(kernels, {})

    def interrupted(call) -> float:
        call()
        raise KeyboardInterrupt

    tuner.timer = interrupted
    x, out = Sized([1.0, 2.0]), Sized([5.0, 5.0])
    with pytest.raises(KeyboardInterrupt):
        tuner[(1,)](x, out, 2, BLOCK=32)
    assert x.data == [1.0, 2.0] and out.data == [5.0, 5.0]
    assert not any(math.isnan(v) for v in out.data)


def test_a_first_round_drops_the_far_behind_when_many_are_asked_for() -> None:
    names = ("stock", "optimal", "none", "heuristic", "stock~s+1")
    kernels = {n: (n, double) for n in names}
    ms = {"stock": 2.0, "optimal": 1.0, "none": 1.05, "heuristic": 3.0, "stock~s+1": 1.2}
    launcher = SizedLauncher(kernels)
    timer = FakeTimer(launcher, ms)
    tuner = Measurer(None, ARGS, {}, launcher=launcher, timer=timer, candidates=names)
    tuner[(1,)](Sized([1.0, 2.0]), Sized([0.0, 0.0]), 2, BLOCK=32)
    report = autotuner.last_tuning_report()
    status = {c.name: c.status for c in report.candidates}
    assert report.winner == "optimal"
    # 10% behind the fastest first round: dropped after it, with that one time.
    assert status == {
        "stock": "dropped",
        "optimal": "timed",
        "none": "timed",
        "heuristic": "dropped",
        "stock~s+1": "dropped",
    }
    assert (
        report.outcome("heuristic").ms == [3.0]
        and "200% behind" in report.outcome("heuristic").reason
    )
    # One round of five, then whole cycles of the two kept (not of all five): 5 rounds
    # rounded up to 6; 5% apart, every round apart: no close call, no extra round.
    assert len(timer.order) == 5 + report.rounds * 2
    assert report.rounds == 6


class NoisyTimer(FakeTimer):
    """Each candidate's time, times a factor taken in turn from ``noise``."""

    def __init__(self, launcher, ms: dict[str, float], noise: list[float]) -> None:
        super().__init__(launcher, ms)
        self.noise, self.calls = noise, 0

    def __call__(self, call) -> float:
        ms = super().__call__(call)
        self.calls += 1
        return ms * self.noise[self.calls % len(self.noise)]


def test_a_close_call_takes_extra_rounds_of_the_two_fastest() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", double)}
    launcher = SizedLauncher(kernels)
    # stock 1% ahead of optimal, each round's noise +-4%: the fixed rounds overlap.
    timer = NoisyTimer(launcher, {"stock": 1.0, "optimal": 1.01, "none": 2.0}, [1.04, 0.96, 1.0])
    names = ("stock", "optimal", "none")
    tuner = Measurer(None, ARGS, {}, launcher=launcher, timer=timer, candidates=names)
    tuner[(1,)](Sized([1.0]), Sized([0.0]), 1, BLOCK=32)
    report = autotuner.last_tuning_report()
    ms = {c.name: c.ms for c in report.candidates}
    assert len(ms["none"]) == 6  # the fixed rounds: 5, rounded up to whole cycles of 3
    # The two fastest stay a close call to the end: each gets every extra round.
    assert len(ms["stock"]) == len(ms["optimal"]) == 6 + measured.SETTLE_ROUNDS
    assert report.rounds == 6 + measured.SETTLE_ROUNDS


def test_a_close_call_ends_when_the_rounds_part() -> None:
    times = {"a": [1.0, 1.02, 0.99], "b": [1.01, 1.03, 1.0], "c": [2.0]}
    assert tuning.close_call(times, 0.03) == ("a", "b")
    assert tuning.close_call(times, 0.005) is None  # medians 1% apart
    parted = {"a": [1.0, 1.0, 0.99], "b": [1.02, 1.03, 1.02]}
    assert tuning.close_call(parted, 0.03) is None  # a's slowest beats b's fastest
    assert tuning.close_call({"a": [1.0], "b": []}, 0.03) is None


def test_three_distinct_binaries_take_every_round() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", double)}
    tuner, _, _ = make(kernels, {"stock": 9.0, "optimal": 1.0, "none": 3.0})
    tuner[(1,)](Sized([1.0]), Sized([0.0]), 1, BLOCK=32)
    assert {c.status for c in autotuner.last_tuning_report().candidates} == {"timed"}


def test_the_default_candidates_are_stock_ours_and_their_stage_variants() -> None:
    tuner = Measurer(None, ARGS, {}, launcher=SizedLauncher({}), timer=lambda call: 1.0)
    assert [c.name for c in tuner.candidates] == list(MEASURED_CANDIDATES)
    assert MEASURED_CANDIDATES[0] == "stock" and "optimal~s+1" in MEASURED_CANDIDATES


def test_candidates_are_asked_for_with_stock_always_among_them(tmp_path) -> None:
    settings = wst.enable("measured", cache_dir=str(tmp_path), candidates="optimal, none~s+1")
    try:
        assert settings.candidates == ("stock", "optimal", "none~s+1")
        measurer = launches.measurer_factory(specialized_kernel, launches._session)
        assert [c.name for c in measurer.candidates] == ["stock", "optimal", "none~s+1"]
    finally:
        wst.disable()
    with pytest.raises(ValueError, match="candidates: 'optimal~zz': unknown knob"):
        wst.enable("measured", cache_dir=str(tmp_path), candidates=["optimal~zz"])
    with pytest.raises(ValueError, match="candidates are measured mode's"):
        wst.enable("optimal", cache_dir=str(tmp_path), candidates=["none"])
    assert not wst.is_enabled()
    asked = environ.enable_arguments(
        {"WS_SOLVER": "measured", "WS_SOLVER_CANDIDATES": "optimal,heuristic"}
    )
    assert asked == {"strategy": "measured", "candidates": ("optimal", "heuristic")}


def test_without_a_gpu_stocks_kernel_is_launched_and_said_once() -> None:
    kernels = {"stock": ("s", double), "optimal": ("o", double), "none": ("n", double)}
    tuner, launcher, _ = make(kernels, {})
    launcher.why_not = "no CUDA GPU is visible"
    with pytest.warns(WSTuningWarning, match="ws_solver measured: not measuring k"):
        tuner[(1,)](Sized([1.0]), Sized([0.0]), 1, BLOCK=32)
    assert launcher.launches == ["stock"]
    assert autotuner.last_tuning_report().winner == "stock"


def test_restoring_hooks_know_nothing_read_and_written() -> None:
    hooks = RestoringHooks(tensors=lambda nargs: dict(nargs))
    assert hooks.in_out() == frozenset()
    a = Sized([1.0])
    hooks.before({"a": a})
    a.data[0] = 9.0
    hooks.finish({"a": a})
    assert a.data == [1.0] and hooks.originals == {}


# -- routing launches -------------------------------------------------------------------------
@triton.jit
def specialized_kernel(x_ptr, n, BLOCK: tl.constexpr):
    for i in tl.range(0, n, BLOCK, warp_specialize=True):
        tl.store(x_ptr + i + tl.arange(0, BLOCK), 1.0)


@triton.jit
def plain_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


class Recorder:
    def __init__(self, jit, session) -> None:
        self.jit, self.session, self.calls = jit, session, []

    def run(self, *args, grid, warmup, **kwargs):
        self.calls.append((args, grid, kwargs))
        try:  # a build's launch, nested in the routed one, is Triton's own
            self.jit.run(*args, grid=grid, warmup=warmup, **kwargs)
        except Exception as e:  # no GPU here: Triton's own run fails at its driver
            self.calls.append(type(e).__name__)
        return "measured"


def test_launches_of_specialized_kernels_go_to_their_measurer(tmp_path, monkeypatch) -> None:
    made: list[Recorder] = []

    def factory(jit, session):
        made.append(Recorder(jit, session))
        return made[-1]

    monkeypatch.setattr(launches, "measurer_factory", factory)
    original = triton.runtime.jit.JITFunction.run
    wst.enable("measured", cache_dir=str(tmp_path), skip="skipped_*")
    try:
        assert specialized_kernel[(1,)](None, 4, BLOCK=2) == "measured"
        assert specialized_kernel[(1,)](None, 8, BLOCK=2) == "measured"
        assert len(made) == 1 and made[0].session.settings.strategy == "measured"
        assert len([c for c in made[0].calls if isinstance(c, tuple)]) == 2
        assert all(c != "RecursionError" for c in made[0].calls)
        with pytest.raises(Exception) as plain:  # Triton's own run: no driver on the CPU
            plain_kernel[(1,)](None, BLOCK=2)
        assert plain.value.__class__.__name__ != "AssertionError" and len(made) == 1
    finally:
        wst.disable()
    assert triton.runtime.jit.JITFunction.run is original and not launches.installed()


def test_a_kernel_whose_loop_is_in_a_helper_is_measured() -> None:
    """The attention kernels' loops sit in `@triton.jit` helpers (`_kv_loop`): their launches
    are measured too (the H100 sweep of 2026-12-07 launched stock's racy kernel for five
    attention configs, its loop's tag out of the kernel's own source)."""
    for family in ("attention_fwd", "attention_fwd_indesc", "attention_fwd_pointer"):
        kernel = corpus_kernels.load(family).KERNEL
        assert "warp_specialize" not in kernel.src
        assert launches.asks_for_specialization(kernel), family
    assert not launches.asks_for_specialization(plain_kernel)


def test_a_skipped_kernel_is_not_measured(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(launches, "measurer_factory", lambda jit, s: pytest.fail("measured"))
    wst.enable("measured", cache_dir=str(tmp_path), skip="specialized_*")
    try:
        with pytest.raises(Exception) as e:
            specialized_kernel[(1,)](None, 4, BLOCK=2)
        assert e.type is not pytest.fail.Exception
    finally:
        wst.disable()


def test_other_strategies_route_nothing(tmp_path) -> None:
    original = triton.runtime.jit.JITFunction.run
    with wst.partitioner("optimal", cache_dir=str(tmp_path)):
        assert triton.runtime.jit.JITFunction.run is original


def test_the_environment_asks_for_measured_and_stock() -> None:
    assert environ.enable_arguments({"WS_SOLVER": "measured"}) == {"strategy": "measured"}
    assert environ.enable_arguments({"WS_SOLVER": "stock"}) == {"strategy": "stock"}


@pytest.mark.slow
def test_a_compile_outside_a_launch_builds_stocks_kernel_where_stock_builds() -> None:
    """Inductor and triton.compile compile without a launch to time: stock's kernel, or
    optimal's where stock fails (Triton 3.6's sm_90 pass on 4-warp host descriptors)."""
    config = corpus_kernels.load("gemm_tma_indesc").CONFIGS["t128x128x64_w4_s3"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Triton 3.9's own once-per-process notice (the first compile of a process, so it
        # fired here only where this test ran first): not ws_solver's.
        warnings.filterwarnings("ignore", "TRITON_DEFAULT_FP_FUSION", UserWarning)
        compiled = compile_corpus_kernel("gemm_tma_indesc", config, "measured", 90)
    report = compiled.metadata.ws_solver
    assert report["strategy_asked"] == "measured" and report["strategy_used"] == "stock"
    assert "no launch to time" in report["notes"][0]
    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x128x64_w4_s4"]
    report = compile_corpus_kernel("gemm_tma", config, "measured", 90).metadata.ws_solver
    if report["notes"][0].startswith("measured, no launch to time: stock failed"):
        assert report["strategy_used"] in ("optimal", "heuristic")
    else:  # a Triton whose stock pass builds it (3.9)
        assert report["strategy_used"] == "stock"


@pytest.mark.slow
def test_compile_only_builds_every_candidate_for_a_target_without_a_gpu(tmp_path) -> None:
    """``compile_only``: the candidates built for sm_90 on the CPU, ptxas's count each."""
    module = corpus_kernels.load("gemm_tma_indesc")
    config = module.CONFIGS["t128x256x64_w4_s3"]
    tuner = wst.autotune(candidates=("stock", "none", "optimal"))(module.KERNEL)
    signature = module.signature(config)
    built = tuner.compile_only(
        signature,
        corpus_kernels.constexprs(config),
        target="sm_90",
        num_warps=4,
        num_stages=3,
    )
    by_name = {b.candidate: b for b in built}
    assert list(by_name) == ["stock", "none", "optimal"]
    assert not any(b.error for b in built)
    assert by_name["stock"].spilled_bytes == 0 and by_name["none"].spilled_bytes > 1000
    # optimal keeps stock's two-consumer-group kernel (its own builds spill)
    assert by_name["optimal"].strategy_used == "stock" and by_name["optimal"].spilled_bytes == 0
    assert "no spill" in by_name["stock"].line()

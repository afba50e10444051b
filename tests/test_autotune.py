"""ws_solver.triton.autotune on the CPU: the choice with a fake launcher and timer (selection,
discards, argument hooks, the on-disk cache, ties), the candidate grammar, and the real
launcher's per-candidate builds through Triton's JIT against a stand-in driver."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

pytest.importorskip("triton")

from stand_in_driver import StandInDriver

from ws_solver.core import candidates  # noqa: E402
from ws_solver.core.candidates import REFERENCE, Candidate  # noqa: E402
from ws_solver.triton.autotuning import autotuner, tuning  # noqa: E402
from ws_solver.triton.autotuning.autotuner import Autotuner, WSTuningWarning  # noqa: E402

ARGS = ("x", "out", "n", "BLOCK")


class T:
    """A fake tensor: a list of floats with the in-place methods the hooks use."""

    def __init__(self, data, dtype: str = "float32") -> None:
        self.data, self.dtype = [float(v) for v in data], dtype

    def data_ptr(self) -> int:
        return 0

    def clone(self) -> T:
        return T(self.data, self.dtype)

    def copy_(self, other: T) -> None:
        self.data[:] = other.data

    def zero_(self) -> None:
        self.data[:] = [0.0] * len(self.data)


def double(nargs: dict) -> None:
    nargs["out"].data[:] = [2 * v for v in nargs["x"].data]


def wrong(nargs: dict) -> None:
    nargs["out"].data[:] = [2 * v + 1 for v in nargs["x"].data]


def half(nargs: dict) -> None:  # leaves the second half unwritten
    n = len(nargs["x"].data) // 2
    nargs["out"].data[:n] = [2 * v for v in nargs["x"].data[:n]]


def broken(nargs: dict) -> None:
    raise RuntimeError("ptxas error: Insufficient registers")


class FakeLauncher:
    """Runs each candidate's body on fake tensors; records every launch."""

    name = "k"

    def __init__(self, kernels: dict, device: str = "H200", source: str = "src-1") -> None:
        self.kernels = {REFERENCE.name: ("ref", double), **kernels}
        self.device, self.source = device, source
        self.launches: list[str] = []
        self.why_not: str | None = None

    def unavailable(self) -> str | None:
        return self.why_not

    def identity(self) -> dict:
        return {"name": self.name, "source": self.source, "device": self.device, "triton": "3.6"}

    def constexprs(self) -> list[str]:
        return ["BLOCK"]

    def check_candidates(self, found) -> None:
        pass

    def launch(self, candidate: Candidate, args: tuple, kwargs: dict) -> str:
        self.launches.append(candidate.name)
        nargs = {**dict(zip(ARGS, args, strict=False)), **kwargs}
        self.kernels[candidate.name][1](nargs)
        return candidate.name

    def describe(self, kernel: str) -> dict:
        return {"binary": self.kernels[kernel][0], "strategy_used": kernel.split("~")[0]}

    def tensors(self, nargs: dict) -> dict:
        return {k: v for k, v in nargs.items() if isinstance(v, T)}

    def snapshot(self, t: T) -> T:
        return t.clone()

    def differs(self, a: T, b: T) -> bool:
        return any(not _same(p, q) for p, q in zip(a.data, b.data, strict=True))

    def poison(self, t: T) -> None:
        t.data[:] = [math.nan] * len(t.data)

    def disagreement(self, ref: T, out: T, tolerance) -> str | None:
        bad = sum(not _same(p, q) for p, q in zip(ref.data, out.data, strict=True))
        return f"{bad} elements differ" if bad else None

    def synchronize(self) -> None:
        pass


def _same(p: float, q: float) -> bool:
    return (math.isnan(p) and math.isnan(q)) or p == q


class FakeTimer:
    """Runs the call once and says the time its candidate is given."""

    def __init__(self, launcher: FakeLauncher, ms: dict[str, float]) -> None:
        self.launcher, self.ms, self.order = launcher, ms, []

    def __call__(self, call) -> float:
        call()
        name = self.launcher.launches[-1]
        self.order.append(name)
        return self.ms[name]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(autotuner.SWITCH_ENV, raising=False)
    monkeypatch.delenv("TRITON_PRINT_AUTOTUNING", raising=False)


def make(
    kernels: dict, ms: dict, names=("heuristic", "optimal", "none"), **kw
) -> tuple[Autotuner, FakeLauncher, FakeTimer]:
    launcher = FakeLauncher(kernels, **kw.pop("launcher_kw", {}))
    timer = FakeTimer(launcher, ms)
    kw.setdefault("cache_results", False)
    tuner = Autotuner(None, ARGS, key=["n"], candidates=names, launcher=launcher, timer=timer, **kw)
    return tuner, launcher, timer


def launch(tuner: Autotuner, n: int = 4, block: int = 32) -> tuple[T, T]:
    x, out = T(range(n)), T([7.0] * n)
    tuner[(1,)](x, out, n, BLOCK=block)
    return x, out


GOOD = {"heuristic": ("h", double), "optimal": ("h", double), "none": ("n", double)}


def test_fastest_candidate_wins_and_identical_binaries_are_timed_once() -> None:
    tuner, launcher, timer = make(GOOD, {"heuristic": 1.0, "none": 2.0}, rounds=3)
    x, out = launch(tuner)
    report = autotuner.last_tuning_report()
    assert report.winner == "heuristic" and tuner.best_config == candidates.parse("heuristic")
    assert out.data == [0.0, 2.0, 4.0, 6.0]  # the real launch ran, with the winner
    assert launcher.launches[-1] == "heuristic"
    status = {c.name: (c.status, c.same_as) for c in report.candidates}
    assert status == {
        "heuristic": ("timed", None),
        "optimal": ("duplicate", "heuristic"),
        "none": ("timed", None),
    }
    # 3 interleaved rounds asked, 4 run (whole cycles of the two binaries), each starting one
    # candidate later; the duplicate is never timed
    assert timer.order == ["heuristic", "none", "none", "heuristic"] * 2
    assert report.outcome("none").ms == [2.0, 2.0, 2.0, 2.0]
    assert report.rounds == 4
    assert report.key == ["n=4", "BLOCK=32", "x:float32", "out:float32"]
    # the same key launches again without tuning; another shape key tunes again
    before = len(launcher.launches)
    launch(tuner)
    assert launcher.launches[before:] == ["heuristic"]
    launch(tuner, n=6)
    assert len(autotuner.tuning_reports()) >= 2 and autotuner.last_tuning_report().key[0] == "n=6"


def test_disagreeing_unwritten_and_failing_candidates_are_discarded_with_a_warning() -> None:
    kernels = {
        "heuristic": ("h", wrong),
        "optimal": ("o", half),
        "triton": ("t", broken),
        "none": ("n", double),
    }
    ms = {"heuristic": 0.1, "optimal": 0.1, "triton": 0.1, "none": 5.0}
    names = ("heuristic", "optimal", "triton", "none")
    tuner, launcher, _ = make(kernels, ms, names=names)
    with pytest.warns(WSTuningWarning, match="heuristic discarded: out: 4 elements differ"):
        _, out = launch(tuner)
    report = autotuner.last_tuning_report()
    by = {c.name: c for c in report.candidates}
    assert by["heuristic"].status == "discarded"
    assert by["optimal"].status == "discarded" and "2 elements differ" in by["optimal"].reason
    assert by["triton"].status == "failed" and "Insufficient registers" in by["triton"].reason
    assert by["none"].status == "untimed"  # the only binary left: nothing to time against
    assert report.winner == "none" and out.data == [0.0, 2.0, 4.0, 6.0]


def test_every_candidate_discarded_falls_back_to_the_reference() -> None:
    tuner, _, _ = make({"heuristic": ("h", wrong)}, {}, names=("heuristic",))
    with pytest.warns(WSTuningWarning):
        _, out = launch(tuner)
    report = autotuner.last_tuning_report()
    assert report.winner == REFERENCE.name and "no candidate agreed" in report.note
    assert out.data == [0.0, 2.0, 4.0, 6.0]


def accumulate(nargs: dict) -> None:
    """acc += x; x += 1: acc must start at zero, x must be restored between runs."""
    acc, x = nargs["out"], nargs["x"]
    acc.data[:] = [a + v for a, v in zip(acc.data, x.data, strict=True)]
    x.data[:] = [v + 1 for v in x.data]


def test_reset_to_zero_and_restore_value_between_runs() -> None:
    kernels = {"heuristic": ("h", accumulate), "none": ("n", accumulate)}
    tuner, launcher, _ = make(
        kernels,
        {"heuristic": 1.0, "none": 2.0},
        names=("heuristic", "none"),
        hooks=tuning.Hooks(reset_to_zero=["out"], restore_value=["x"]),
    )
    launcher.kernels[REFERENCE.name] = ("ref", accumulate)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WSTuningWarning)  # nobody disagrees
        x, out = launch(tuner)
    report = autotuner.last_tuning_report()
    assert [c.status for c in report.candidates] == ["timed", "timed"]
    assert len(launcher.launches) > 5  # reference twice, 2 checks, 3 rounds x 2, the launch
    # after all those runs: one launch's effect on the original arguments
    assert out.data == [0.0, 1.0, 2.0, 3.0] and x.data == [1.0, 2.0, 3.0, 4.0]


def test_an_undeclared_in_out_argument_stops_tuning_instead_of_a_vacuous_check() -> None:
    # x changes, so it looks like an output; poisoned, it turns every output into NaN
    kernels = {"heuristic": ("h", accumulate), "none": ("n", accumulate)}
    tuner, launcher, _ = make(
        kernels,
        {"heuristic": 1.0, "none": 2.0},
        names=("heuristic", "none"),
        hooks=tuning.Hooks(reset_to_zero=["out"]),
        default="none",
    )
    launcher.kernels[REFERENCE.name] = ("ref", accumulate)
    with pytest.warns(WSTuningWarning, match="left x all poison.*restore_value; building none"):
        launch(tuner)
    report = autotuner.last_tuning_report()
    assert not report.tuned and report.winner == "none"


def test_the_disk_cache_keys_on_source_shape_key_and_gpu() -> None:
    ms = {"heuristic": 1.0, "none": 2.0}

    def fresh(**launcher_kw) -> tuple[Autotuner, FakeLauncher]:
        tuner, launcher, _ = make(GOOD, ms, cache_results=True, launcher_kw=launcher_kw)
        return tuner, launcher

    tuner, launcher = fresh()
    launch(tuner)
    assert not autotuner.last_tuning_report().cached and REFERENCE.name in launcher.launches
    # another process (a fresh tuner) with the same source, key and GPU: no tuning
    tuner, launcher = fresh()
    _, out = launch(tuner)
    report = autotuner.last_tuning_report()
    assert report.cached and report.winner == "heuristic"
    assert launcher.launches == ["heuristic"] and out.data == [0.0, 2.0, 4.0, 6.0]
    assert "from the cache" in report.summary()
    for changed in ({"source": "src-2"}, {"device": "B200"}):
        tuner, launcher = fresh(**changed)
        launch(tuner)
        assert not autotuner.last_tuning_report().cached, changed
    tuner, launcher = fresh()
    launch(tuner, n=8)  # another shape key
    assert not autotuner.last_tuning_report().cached
    tuner, launcher = fresh()
    launch(tuner, block=64)  # another constexpr
    assert not autotuner.last_tuning_report().cached


def test_key_changes_with_every_cached_field() -> None:
    base = {"name": "k", "source": "s", "device": "H200", "triton": "3.6.0"}
    key = tuning.call_key(ARGS, ["n"], ["BLOCK"], {"x": T([1]), "out": T([1]), "n": 4})

    def digest(**changes) -> str:
        args = {"identity": base, "call_key": key, "candidates": ["a"], "reference": "r"}
        args.update(changes)
        return autotuner.tunecache.key_for(**args, options={})

    same = digest()
    assert digest() == same
    for field_ in ("source", "device", "triton", "name"):
        assert digest(identity={**base, field_: "other"}) != same, field_
    assert digest(call_key=(*key[:-1], "out:float16")) != same
    assert digest(candidates=["a", "b"]) != same


def test_ties_go_to_the_earlier_candidate() -> None:
    kernels = {"heuristic": ("h", double), "none": ("n", double), "optimal": ("o", double)}
    ms = {"heuristic": 1.0, "none": 1.0, "optimal": 1.0}
    for names in (("none", "optimal", "heuristic"), ("optimal", "heuristic", "none")):
        for _ in range(2):
            tuner, _, _ = make(kernels, ms, names=names, rounds=4)
            launch(tuner)
            assert autotuner.last_tuning_report().winner == names[0]
    assert tuning.fastest({"b": [1.0, 3.0, 2.0], "a": [2.0, 2.0, 1.0]}) == "b"
    assert tuning.round_orders(["a", "b", "c"], 3) == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
    ]
    # every entry in every place equally often: whole cycles of the order
    assert [tuning.balanced_rounds(r, 3) for r in (1, 3, 5, 7)] == [3, 3, 6, 9]
    assert tuning.balanced_rounds(4, 1) == 4 and tuning.balanced_rounds(4, 0) == 4


def test_without_a_gpu_or_when_turned_off_the_default_is_built_and_said_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    tuner, launcher, timer = make(GOOD, {}, default="none")
    launcher.why_not = "no CUDA GPU is visible"
    with pytest.warns(WSTuningWarning, match=r"not tuning k \(no CUDA GPU is visible\); building"):
        launch(tuner)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WSTuningWarning)  # said once
        launch(tuner, n=8)
    assert launcher.launches == ["none", "none"] and not timer.order
    report = autotuner.last_tuning_report()
    assert not report.tuned and report.winner == "none"

    monkeypatch.setenv(autotuner.SWITCH_ENV, "0")
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    tuner, launcher, _ = make(GOOD, {})
    with pytest.warns(WSTuningWarning, match="WS_SOLVER_AUTOTUNE=0"):
        launch(tuner)
    assert launcher.launches == ["optimal"]
    assert "-> optimal (not tuned: tuning is turned off" in capsys.readouterr().out


def test_printed_choice_and_report_round_trip(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    tuner, _, _ = make(GOOD, {"heuristic": 1.0, "none": 2.0})
    launch(tuner)
    printed = capsys.readouterr().out
    assert "ws_solver autotune: k [n=4, BLOCK=32" in printed
    assert "-> heuristic in" in printed and "optimal = heuristic; none 2.0000 ms" in printed
    assert "by 100.0% (its rounds apart)" in printed
    report = autotuner.last_tuning_report()
    data = report.to_dict()
    assert data["candidates"][0]["median_ms"] == 1.0
    assert tuning.TuningReport.from_dict(data) == report


def test_the_margin_says_whether_the_rounds_separate_the_winner() -> None:
    def report(winner_ms: list[float], other_ms: list[float]) -> tuning.TuningReport:
        outcomes = [
            tuning.Outcome("optimal", status="timed", ms=winner_ms),
            tuning.Outcome("none", status="timed", ms=other_ms),
            tuning.Outcome("heuristic", status="duplicate", same_as="optimal"),
        ]
        return tuning.TuningReport("k", [], "optimal", rounds=3, candidates=outcomes)

    ratio, apart = report([1.00, 1.01, 0.99], [1.10, 1.09, 1.11]).margin()
    assert ratio == pytest.approx(0.10) and apart
    ratio, apart = report([1.00, 1.04, 0.99], [1.02, 1.01, 1.03]).margin()
    assert ratio == pytest.approx(0.02) and not apart
    assert (
        "by 2.0% (inside the rounds' spread)"
        in report([1.00, 1.04, 0.99], [1.02, 1.01, 1.03]).summary()
    )
    assert report([1.0], []).margin() is None  # one timed candidate: nothing to compare


def test_prune_configs_by_over_candidates() -> None:
    def early(found, nargs, **kwargs):
        return [c for c in found if c.plan != "optimal"]

    tuner, launcher, _ = make(
        GOOD,
        {"heuristic": 1.0, "none": 2.0},
        prune_configs_by={"early_config_prune": early, "perf_model": lambda candidate, **_: 0},
    )
    launch(tuner)
    report = autotuner.last_tuning_report()
    assert report.outcome("optimal").status == "pruned" and "optimal" not in launcher.launches


def test_candidate_names_and_specs() -> None:
    c = candidates.parse("explore:2~ov0~wg0~s-1")
    assert c == Candidate("explore:2", False, False, -1) and c.name == "explore:2~ov0~wg0~s-1"
    assert candidates.parse("triton").enable_keywords() == {
        "overlap_wgmma": True,
        "release_per_warp_group": True,
        "take_turns": False,
    }
    names = [c.name for c in candidates.expand("heuristic, top:3~s+1,none,heuristic")]
    assert names == ["heuristic", "explore:0~s+1", "explore:1~s+1", "explore:2~s+1", "none"]
    # stock's own kernel first, then the verified strategies only: no plan past rank 0 (one
    # faulted on the H200)
    assert [c.name for c in candidates.expand(candidates.DEFAULT_CANDIDATES)] == [
        "stock",
        "heuristic",
        "optimal",
        "none",
        "triton",
    ]
    # explore:K is the plan of rank K here too, as in enable() and the CLI
    assert [c.name for c in candidates.expand("explore:0,explore:3~ov0")] == [
        "explore:0",
        "explore:3~ov0",
    ]
    for bad, why in (
        ("bogus", "unknown strategy"),
        ("none~zz", "unknown knob"),
        ("none~s+", "unknown knob"),
        ("top:0", "write top:N with N from 1 to 32"),
        ("top:x", "write top:N with N from 1 to 32"),
        ("top:3~zz", "unknown knob"),
        ("explore:x", "write explore:K"),
        ("explore:40", "K is at most 31"),
        ("", "no candidates"),
    ):
        with pytest.raises(ValueError, match=why):
            candidates.expand(bad)


def test_call_key_describes_descriptors_and_leaves_plain_values_out() -> None:
    class Desc:
        base, block_shape = T([1], "float16"), [128, 64]

    key = tuning.call_key(
        ("a", "M", "scale", "BLOCK"), ["M"], ["BLOCK"], {"a": Desc(), "M": 7, "scale": 0.5}
    )
    assert key == ("M=7", "a:desc<float16[128, 64]>", "scale:float")


def test_same_binaries_maps_to_the_first_and_never_matches_unknown() -> None:
    found = tuning.same_binaries({"a": "x", "b": None, "c": "x", "d": None})
    assert found == {"a": "a", "b": "b", "c": "a", "d": "d"}


# -- the real launcher, on the CPU ---------------------------------------------------------------
def test_each_candidate_builds_through_the_jit_into_its_own_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import triton.language as tl
    from triton.runtime.driver import driver
    from triton.runtime.jit import MockTensor
    from triton.tools.tensor_descriptor import TensorDescriptor

    import ws_solver.triton as wst
    from corpus.kernels import gemm_tma
    from ws_solver.model.target import target_for
    from ws_solver.triton.autotuning.launcher import TritonLauncher
    from ws_solver.triton.toolchain.versions import planning_version

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setattr(driver, "_active", StandInDriver())
    fn = gemm_tma.KERNEL
    launcher = TritonLauncher(fn, {"lowering_timeout": None})
    config = gemm_tma.CONFIGS["t128x256x64_w8_s3"]

    def desc(block: list[int]) -> TensorDescriptor:
        return TensorDescriptor(MockTensor(tl.float16), [1024, 1024], [1024, 1], block)

    args = (desc([128, 64]), desc([256, 64]), desc([128, 256]), 1024, 1024, 1024)
    kwargs = {**config, "grid": (1,), "warmup": True}  # compile, do not launch
    outer = wst.enable("none", cache_dir=tmp_path / "outer", lowering_timeout=None)
    try:
        built = {
            name: launcher.describe(launcher.launch(candidates.parse(name), args, kwargs))
            for name in ("none", "heuristic", "optimal", "heuristic~s+1")
        }
        assert wst.current_settings() == outer  # the user's session is back after each build
    finally:
        wst.disable()
    assert built["heuristic"]["strategy_used"] == "heuristic"
    assert built["heuristic"]["binary"] == built["optimal"]["binary"]  # deduplicated later
    # Planning for Triton 3.9 the model keeps this GEMM unspecialized: heuristic builds none's
    # cubin (LoweringFacts.pipelines_wgmma_chains); for 3.6 it specializes.
    specializes = not target_for("sm_90", planning_version()).triton.pipelines_wgmma_chains
    assert (built["none"]["binary"] != built["heuristic"]["binary"]) == specializes
    others = {built[n]["binary"] for n in ("none", "heuristic")}
    assert built["heuristic~s+1"]["binary"] not in others
    folders = sorted(p.name.split("-")[1] for p in (tmp_path / "triton").iterdir())
    assert folders == ["heuristic", "none", "optimal"]
    assert not fn.device_caches  # the kernel's own in-memory cache was never used
    assert not (tmp_path / "outer").exists()  # nothing compiled under the user's session
    # built once: launching a built candidate again compiles nothing
    again = launcher.launch(candidates.parse("heuristic"), args, kwargs)
    assert launcher.describe(again) == built["heuristic"]

    # no GPU here: the decorator builds its default and says so once
    assert launcher.unavailable() is not None
    tuner = wst.autotune(enable_options={"lowering_timeout": None})(fn)
    with pytest.warns(WSTuningWarning, match=r"not tuning gemm_tma_kernel \(.*building optimal"):
        (kernel,) = tuner.warmup(*args[:6], grid=(1,), **config)
    assert tuner.launcher.describe(kernel) == {**built["optimal"], "strategy_used": "optimal"}


def test_stacks_with_triton_autotune_either_way() -> None:
    import triton
    import triton.language as tl

    import ws_solver.triton as wst

    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.arange(0, BLOCK), mask=tl.arange(0, BLOCK) < n)

    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
    plans_per_config = triton.autotune(configs, key=["n"])(wst.autotune(key=["n"])(kernel))
    assert plans_per_config.base_fn is kernel.fn
    product = wst.autotune(key=["n"])(triton.autotune(configs, key=["n"])(kernel))
    assert product.launcher.jit is kernel and len(product.launcher.tuners) == 1
    with pytest.raises(ValueError, match="num_stages deltas"):
        wst.autotune(candidates=["none~s+1"])(triton.autotune(configs, key=["n"])(kernel))
    wst.autotune(candidates=["none~s+1"])(kernel)  # fine right above the kernel
    with pytest.raises(TypeError, match="not a @triton.jit kernel"):
        wst.autotune()(lambda x: x)


def test_enable_can_leave_in_memory_kernels_alone(tmp_path: Path) -> None:
    import triton

    import ws_solver.triton as wst

    @triton.jit
    def kernel(x_ptr):
        pass

    kernel.device_caches[0] = ({"compiled": object()}, {}, None, None, None)
    with wst.partitioner("none", cache_dir=tmp_path, reset_caches=False):
        assert kernel.device_caches[0][0]
    assert kernel.device_caches[0][0]  # not cleared on the way out either
    with wst.partitioner("none", cache_dir=tmp_path):
        assert not kernel.device_caches[0][0]


def test_a_foreign_file_in_the_disk_cache_is_a_miss() -> None:
    tuner, _, _ = make(GOOD, {"heuristic": 1.0, "none": 2.0}, cache_results=True)
    launch(tuner)
    (path,) = autotuner.tunecache.cache_dir().glob("*.json")
    path.write_text('{"winner": "no-such-strategy", "kernel": "k"}')
    tuner, launcher, _ = make(GOOD, {"heuristic": 1.0, "none": 2.0}, cache_results=True)
    with pytest.warns(WSTuningWarning, match="bad cached choice .it is not a tuning record"):
        launch(tuner)
    assert not autotuner.last_tuning_report().cached and REFERENCE.name in launcher.launches
    assert '"winner": "heuristic"' in path.read_text()  # tuned again and stored

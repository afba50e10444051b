"""The bench's autotune strategy on the CPU: --strategies parsing, the tuned row's compile
record, and the warm pass: a spec read from Triton's JIT (a stand-in driver, no GPU), built in
a helper process, is what the autotuner's own launches then load instead of compiling."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

import pytest

pytest.importorskip("triton")

from stand_in_driver import StandInDriver

from benchmarks.common import autotune_warm, bench_strategies  # noqa: E402
from benchmarks.gpu import bench_autotune, bench_kernels  # noqa: E402
from ws_solver.core import candidates  # noqa: E402
from ws_solver.triton.autotuning import autotuner  # noqa: E402
from ws_solver.triton.autotuning.tuning import Outcome, TuningReport  # noqa: E402

ROW = {"job": "gemm_tma.c.autotune", "kernel": "gemm_tma", "config": "c", "strategy": "autotune"}


def test_strategies_split_into_compiled_and_tuned_each_once() -> None:
    split = bench_strategies.split_strategies
    assert split("builtin, autotune,none,autotune,,none") == (["builtin", "none"], ["autotune"])
    assert split("heuristic~s+1") == (["heuristic~s+1"], [])
    assert split("") == ([], [])
    assert "autotune" in bench_strategies.OURS and "autotune" in bench_strategies.DESCRIPTION
    assert "autotune" not in bench_strategies.STRATEGIES  # asked for by name only


def test_autotune_is_refused_on_a_distributed_backend_and_bad_settings_at_parse() -> None:
    args = argparse.Namespace(kernels="gemm_tma", strategies="builtin,autotune")
    with pytest.raises(SystemExit, match="autotune: tuned on this machine's GPU only"):
        bench_kernels.run(args, distributed=object(), command="")
    with pytest.raises(SystemExit) as bad:
        bench_kernels.main(["--autotune-candidates", "heuristic,nonsense", "--dry-run"])
    assert bad.value.code == 2
    with pytest.raises(SystemExit):
        bench_kernels.main(["--autotune-rounds", "0", "--dry-run"])


def test_tune_settings_default_to_the_autotuners_own() -> None:
    params = inspect.signature(autotuner.autotune).parameters
    settings = bench_autotune.TuneSettings()
    assert settings.candidates == params["candidates"].default == candidates.DEFAULT_CANDIDATES
    assert settings.rounds == params["rounds"].default == autotuner.ROUNDS
    assert (settings.warmup_ms, settings.rep_ms) == (
        params["warmup"].default,
        params["rep"].default,
    )
    args = argparse.Namespace(
        autotune_candidates="none,top:2", autotune_rounds=5, autotune_rep_ms=40.0
    )
    parsed = bench_autotune.TuneSettings.from_args(args)
    assert parsed.to_dict() == {
        "candidates": ["none", "top:2"],
        "rounds": 5,
        "warmup_ms": 25.0,
        "rep_ms": 40.0,
    }
    names = [c.name for c in autotune_warm.builds(parsed.candidates)]
    assert names == ["none~ov0~wg0", "none", "explore:0", "explore:1"]  # the reference first


def test_configs_are_tuned_round_robin_over_the_kernels_each_by_name() -> None:
    rows = [{"kernel": k, "config": c} for k, c in ("ab", "ad", "ac", "xb", "xa", "ae")]
    order = [r["kernel"] + r["config"] for r in bench_autotune.tuning_order(rows)]
    assert order == ["ab", "xa", "ac", "xb", "ad", "ae"]


def _report() -> dict:
    outcomes = [
        Outcome("heuristic", "timed", "b1", strategy_used="heuristic", ms=[1.0, 1.1, 1.0]),
        Outcome("optimal", "duplicate", "b1", same_as="heuristic", strategy_used="optimal"),
        Outcome("none", "timed", "b2", strategy_used="none", ms=[1.3, 1.2, 1.3]),
        Outcome("explore:1", "discarded", "b3", reason="c: relative error 0.5 > 0.002"),
    ]
    report = TuningReport("gemm_tma_kernel", ["M=8192"], "heuristic", "NVIDIA H200", "ref")
    report.candidates, report.rounds = outcomes, 4
    report.compile_s, report.total_s = 0.05, 2.5
    return report.to_dict()


def test_a_tuned_row_names_its_winner_and_keeps_the_report_and_binary() -> None:
    warm = {"from": "jit", "wall_s": 14.0, "compile_s": 12.0, "builds": []}
    warm["builds"] = [{"name": "heuristic", "hash": "h1"}, {"name": "none", "hash": "h1"}]
    described = {"binary": "b1", "warp_specialize_ops": 1, "n_spills": 0}
    settings = bench_autotune.TuneSettings()
    record = bench_autotune.tuned_record(ROW, _report(), described, warm, settings, "h1")
    assert {k: record[k] for k in ROW} == ROW
    assert (record["winner"], record["strategy_used"], record["tuned"]) == (
        "heuristic",
        "heuristic",
        True,
    )
    assert record["binary"] == "b1" and record["timed_binaries"] == 2
    assert (record["compile_s"], record["tune_s"]) == (0.05, 2.5)
    assert record["warm"]["hit"] is True and record["settings"]["rep_ms"] == 100.0
    statuses = [c["status"] for c in record["autotune"]["candidates"]]
    assert statuses == ["timed", "duplicate", "timed", "discarded"]
    assert record["autotune"]["candidates"][0]["median_ms"] == 1.0
    missed = bench_autotune.tuned_record(ROW, _report(), described, warm, settings, "other")
    assert missed["warm"]["hit"] is False
    row = {**ROW, "compile": record, "verify": {"passed": True}, "bench": {"ms_rounds": [1.0]}}
    assert bench_strategies.status_of(row) == "ok" and not bench_strategies.is_our_failure(row)
    line = bench_autotune.progress_line(row)
    assert line.startswith("gemm_tma.c: heuristic of 2 timed in 2.5 s") and "loaded" in line


def test_an_untuned_row_says_what_the_warm_pass_did_or_why_it_failed() -> None:
    builds = [{"name": "none~ov0~wg0", "compile_s": 1.0}, {"name": "heuristic", "error": "E"}]
    dry = bench_autotune.warm_record(ROW, {"compile_s": 3.0, "wall_s": 4.0, "builds": builds})
    assert "error" not in dry and dry["compile_s"] == 3.0
    row = {**ROW, "compile": dry, "dry_run": True}
    assert bench_strategies.status_of(row) == "compiled"
    assert bench_autotune.progress_line(row).endswith("warm 4.0 s, builds 3.0 s, 1 failed to build")
    none = bench_autotune.warm_record(ROW, {"builds": [{"name": "none", "error": "ptxas: E"}]})
    assert none["error"] == "no build compiled: ptxas: E"
    died = bench_autotune.warm_record(ROW, {"error": "warm process died (rc -9): "})
    row = {**ROW, "compile": died, "dry_run": False, "verify": None}
    assert bench_strategies.is_our_failure(row)
    assert "FAILED warm process died" in bench_autotune.progress_line(row)


@pytest.mark.triton
def test_builds_warmed_in_a_helper_from_the_jits_spec_are_what_the_autotuner_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import triton.language as tl
    from triton.runtime.driver import driver
    from triton.runtime.jit import MockTensor
    from triton.tools.tensor_descriptor import TensorDescriptor

    from corpus.kernels import gemm_tma
    from ws_solver.triton.autotuning.launcher import TritonLauncher

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path / "plans"))
    monkeypatch.setattr(driver, "_active", StandInDriver())
    config = gemm_tma.CONFIGS["t128x256x64_w8_s3"]

    def desc(block: list[int]) -> TensorDescriptor:
        return TensorDescriptor(MockTensor(tl.float16), [1024, 1024], [1024, 1], block)

    args = (desc([128, 64]), desc([256, 64]), desc([128, 256]), 1024, 1024, 1024)
    reader = bench_autotune.SpecReader(gemm_tma.KERNEL)
    reader[(8, 1, 1)](*args, **config)  # as module.launch would call KERNEL[grid](...)
    assert not gemm_tma.KERNEL.device_caches  # nothing compiled, nothing kept
    spec = autotune_warm.spec_from_jit(
        "gemm_tma", "t128x256x64_w8_s3", reader.data, driver.active.get_current_target()
    )
    assert spec["signature"]["a_desc"] == "tensordesc<fp16[128, 64]>"  # the JIT's spelling
    corpus = autotune_warm.spec_from_corpus("gemm_tma", "t128x256x64_w8_s3", 90)
    assert autotune_warm.source_of(corpus)[0].hash() != autotune_warm.source_of(spec)[0].hash()

    cache = tmp_path / "autotune"
    warm = autotune_warm.warm_in_subprocess(spec, cache, "none,heuristic")
    assert [b["name"] for b in warm["builds"]] == ["none~ov0~wg0", "none", "heuristic"]
    assert not any(b.get("error") for b in warm["builds"]), warm
    assert warm["wall_s"] >= warm["compile_s"] > 0
    assert [b["strategy_used"] for b in warm["builds"]] == ["none", "none", "heuristic"]

    def files() -> set[Path]:
        return {p for p in cache.rglob("*") if p.is_file()}

    before = files()
    launcher = TritonLauncher(gemm_tma.KERNEL, {"cache_dir": str(cache)})
    kwargs = {**config, "grid": (8,), "warmup": True}  # build (load), do not launch
    for build in warm["builds"]:
        kernel = launcher.launch(candidates.parse(build["name"]), args, kwargs)
        assert kernel.hash == build["hash"]
        assert launcher.describe(kernel)["binary"] == build["binary"]
    assert files() == before  # every build was loaded: nothing compiled, nothing written


# -- the GPU side on stand-ins: the real autotuner over a fake launcher, timer and torch -------
class FakeTensor:
    def __init__(self, data: list[float]) -> None:
        self.data = list(data)

    def clone(self) -> FakeTensor:
        return FakeTensor(self.data)


class FakeKernel:
    """What a launch returns: enough of a CompiledKernel for bench_compile.describe."""

    def __init__(self, name: str) -> None:
        import types

        self.hash, self.n_regs, self.n_spills = f"h-{name}", 128, 0
        self.asm = {"ttgir": "", "cubin": name.split("~")[0].encode()}
        self.metadata = types.SimpleNamespace(
            num_warps=4, num_stages=3, shared=0, ws_solver={"strategy_used": name.split("~")[0]}
        )


class FakeLauncher:
    """Runs each candidate as out = 2 x (explore:1 as 2 x + 1: wrong); records launches."""

    name = "fake_kernel"

    def __init__(self, fn, enable_options) -> None:
        self.launched: list[str] = []
        self.enable_options = enable_options

    def unavailable(self):
        return None

    def identity(self) -> dict:
        return {"name": self.name, "source": "s", "device": "H200", "triton": "3.6"}

    def constexprs(self) -> list[str]:
        return ["BLOCK"]

    def check_candidates(self, found) -> None:
        pass

    def launch(self, candidate, args, kwargs) -> FakeKernel:
        self.launched.append(candidate.name)
        x, out = args[0], args[1]
        out.data[:] = [2 * v + (candidate.name == "explore:1") for v in x.data]
        return FakeKernel(candidate.name)

    def describe(self, kernel: FakeKernel) -> dict:
        return {"binary": kernel.asm["cubin"].decode(), "strategy_used": kernel.hash[2:]}

    def tensors(self, nargs: dict) -> dict:
        return {k: v for k, v in nargs.items() if isinstance(v, FakeTensor)}

    def snapshot(self, t: FakeTensor) -> FakeTensor:
        return t.clone()

    def differs(self, a: FakeTensor, b: FakeTensor) -> bool:
        return repr(a.data) != repr(b.data)

    def poison(self, t: FakeTensor) -> None:
        t.data[:] = [float("nan")] * len(t.data)

    def disagreement(self, ref, out, tolerance):
        return None if repr(ref.data) == repr(out.data) else "differs"

    def synchronize(self) -> None:
        pass


def test_compile_and_tune_runs_the_real_autotuner_and_keeps_the_winners_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys
    import types

    import triton.testing

    from benchmarks.gpu import bench_gpu
    from ws_solver.triton.autotuning import autotuner as tuner_module

    launchers: list[FakeLauncher] = []

    def make_launcher(fn, options) -> FakeLauncher:
        launchers.append(FakeLauncher(fn, options))
        return launchers[-1]

    def do_bench(fn, warmup, rep, quantiles):  # heuristic 1 ms, none 2 ms
        fn()
        ms = {"heuristic": 1.0, "none": 2.0}[launchers[-1].launched[-1]]
        return [ms, ms, ms]

    kernel = types.SimpleNamespace(arg_names=["x", "out", "n", "BLOCK"])

    def launch(config: dict, inputs: dict) -> None:
        module.KERNEL[(1,)](inputs["x"], inputs["out"], 3, BLOCK=config["BLOCK"], num_warps=4)

    module = types.SimpleNamespace(
        KERNEL=kernel,
        CONFIGS={"c": {"BLOCK": 16, "num_warps": 4}},
        make_inputs=lambda config, size, seed: {
            "x": FakeTensor([1.0, 2.0, 3.0]),
            "out": FakeTensor([0.0] * 3),
        },
        launch=launch,
    )
    cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(tuner_module, "TritonLauncher", make_launcher)
    monkeypatch.setattr(triton.testing, "do_bench", do_bench)
    monkeypatch.setattr(bench_autotune.corpus_kernels, "load", lambda name: module)
    monkeypatch.setitem(bench_gpu.BENCH, "fake", {"size": 3})
    monkeypatch.setattr(bench_autotune, "capture_spec", lambda k, c: {"kernel": k, "config": c})
    names = ["none~ov0~wg0", "heuristic", "none", "explore:1"]
    warm = {"builds": [{"name": n, "hash": f"h-{n}"} for n in names], "compile_s": 2.0}
    monkeypatch.setattr(bench_autotune, "warm_in_subprocess", lambda *a: {**warm, "wall_s": 3.0})
    monkeypatch.setattr(bench_autotune, "compile_in_subprocess", lambda job, *a: {"job": job.name})

    def rows_of() -> list[dict]:
        return [
            {"job": f"fake.c.{s}", "kernel": "fake", "config": "c", "strategy": s, "compile": {}}
            for s in ("autotune", "builtin")
        ]

    saves: list[int] = []

    def save() -> None:
        saves.append(1)

    args = argparse.Namespace(
        autotune_candidates="heuristic,none,explore:1",
        autotune_rounds=3,
        autotune_rep_ms=100.0,
        autotune_stop_after=None,
        parallel=2,
        dry_run=False,
        capability=90,
    )
    rows = rows_of()
    kernels, left_out = bench_autotune.compile_and_tune(rows, Path("/tmp"), args, save)
    assert left_out == [] and len(rows) == 2
    record = rows[0]["compile"]
    assert record["winner"] == "heuristic" and record["tuned"] and saves
    assert record["binary"] == describe_binary(b"heuristic") and record["warm"]["hit"] is True
    status = {c["name"]: c["status"] for c in record["autotune"]["candidates"]}
    assert status == {"heuristic": "timed", "none": "timed", "explore:1": "discarded"}
    assert record["autotune"]["rounds"] == 4  # 3 rounded up to whole cycles of 2 binaries
    assert launchers[0].enable_options == {"cache_dir": str(Path("/tmp/autotune").resolve())}
    assert kernels[("fake.c.autotune", "kernel")].hash == "h-heuristic"
    assert rows[1]["compile"] == {"job": "fake.c.builtin"}
    # out of time before the first config: its rows leave the run, nothing is tuned
    args.autotune_stop_after = 1e-9
    rows = rows_of()
    tuned, left_out = bench_autotune.compile_and_tune(rows, Path("/tmp"), args, save)
    assert (tuned, left_out, rows) == ({}, ["fake.c"], [])


def describe_binary(cubin: bytes) -> str:
    import hashlib

    return hashlib.sha256(cubin).hexdigest()[:16]

"""The bench's report and timing helpers (benchmarks/bench_*.py), on committed H200 results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

from benchmarks.analysis import bench_report
from benchmarks.common import bench_compile, bench_strategies
from benchmarks.gpu import bench_gpu, bench_kernels
from corpus import kernels as corpus_kernels

pytestmark = pytest.mark.triton

ROOT = Path(__file__).resolve().parent.parent

FINAL = ROOT / "tests" / "data" / "gpu-2026-11-29-final.json"


def _results() -> list[dict]:
    return json.loads(FINAL.read_text())["results"]


def test_versus_triton_compares_best_verified_rates() -> None:
    results = _results()
    lines = bench_report._versus_triton(results)
    row = next(line for line in lines if line.startswith("| gemm_tma | t128x256x64_w8_s3 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    ours = bench_report._fastest(
        [r for r in results if r["job"].startswith("gemm_tma.t128x256x64_w8_s3.")],
        bench_strategies.OURS,
    )
    assert ours is not None and cells[2] == ours["strategy"]
    assert float(cells[6]) == pytest.approx(float(cells[3]) / float(cells[5]), abs=2e-3)
    # A fallback is not the strategy asked for: Triton's partitioner that fell back never counts.
    fell_back = [r for r in results if bench_strategies.status_of(r).startswith("FALLBACK")]
    assert all(
        bench_report._fastest([r], bench_report.TRITON_STRATEGIES) is None for r in fell_back
    )


def test_correlations_are_per_config_over_distinct_binaries() -> None:
    results = _results()
    corr = bench_report.correlations(results)
    assert set(corr) == {r["kernel"] for r in results}
    for kernel, c in corr.items():
        assert c["raw"] is None or -1.0 <= c["raw"] <= 1.0
        for config, v in c["configs"].items():
            assert v["spearman"] is None or -1.0 <= v["spearman"] <= 1.0
            timed = [
                r
                for r in results
                if (r["kernel"], r["config"]) == (kernel, config)
                and r["strategy"] in bench_strategies.OURS
                and "ms" in (r.get("bench") or {})
                and bench_report.modeled_ii(r)
            ]
            binaries = {(r.get("compile") or {}).get("binary") or r["job"] for r in timed}
            assert v["points"] == len(binaries) <= len(timed)  # a shared cubin counts once
            assert v["distinct_ii"] <= v["points"]


def test_markdown_has_every_section() -> None:
    data = json.loads(FINAL.read_text())
    md = bench_report.markdown(
        data["environment"], data["results"], bench_report.correlations(data["results"])
    )
    sections = (
        "## Correctness",
        "## Speed",
        "## Targets",
        "## ws_solver vs Triton",
        "## Against stock",
    )
    for section in sections:
        assert section in md
    assert "SDPA cuDNN backend" in md  # the vendor's alternatives, timed in the same run


def test_configs_filter_takes_several_substrings() -> None:
    assert bench_kernels.config_matches("d128_m128n128_w8_s2", "")
    assert bench_kernels.config_matches("t64x128x64_w4_s4", "d128,t64x128")
    assert bench_kernels.config_matches("causal_d128_m128n128_w8_s2", "d128,t64x128")
    assert not bench_kernels.config_matches("d64_m128n64_w4_s3", "d128,t64x128")


def test_extra_configs_merge_and_refuse_a_changed_corpus_config(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(bench_compile.EXTRA_CONFIGS_ENV, "")  # restored (unset) after the test
    module = corpus_kernels.load("gemm_tma")
    before = dict(module.CONFIGS)
    try:
        extra = {"gemm_tma": {"x_test": {**before["t128x128x64_w4_s4"], "num_stages": 2}}}
        path = tmp_path / "extra.json"
        path.write_text(json.dumps(extra))
        assert bench_compile.add_extra_configs(path) == ["gemm_tma.x_test"]
        assert module.CONFIGS["x_test"]["num_stages"] == 2
        assert os.environ[bench_compile.EXTRA_CONFIGS_ENV] == str(path.resolve())
        changed = {"gemm_tma": {"t128x128x64_w4_s4": {**before["t128x128x64_w4_s4"], "GROUP_M": 4}}}
        path.write_text(json.dumps(changed))
        with pytest.raises(SystemExit, match="differs from the corpus config"):
            bench_compile.add_extra_configs(path)
    finally:
        module.CONFIGS.clear()
        module.CONFIGS.update(before)


def test_a_binary_is_timed_once_per_config() -> None:
    def row(strategy: str, binary: str | None) -> dict:
        return {"strategy": strategy, "compile": {"binary": binary}}

    rows = [row("none", "a"), row("heuristic", "a"), row("triton", "b"), row("optimal", None)]
    to_time, shared = bench_gpu.timed_once(rows)
    assert [r["strategy"] for r in to_time] == ["none", "triton", "optimal"]
    assert shared == {id(rows[1]): rows[0]}


def test_sustained_rows_are_reported_after_their_vendor() -> None:
    """A run with --sustain gets a table: the vendor's line, then each variant's ratio."""
    data = json.loads(FINAL.read_text())
    results = [r for r in data["results"] if "rate" in (r.get("bench") or {})][:2]
    window = {"samples": 3, "sm_mhz": 1500.0, "power_w": 690.0, "power_capped": 1.0}
    vendor = {"label": "torch SDPA", "sustained": {"rate": 500.0, "rounds": [{"samples": 0}]}}
    for r, rate in zip(results, (510.0, 490.0), strict=True):
        r["bench"]["vendor"] = vendor
        r["bench"]["sustained"] = {
            "rate": rate,
            "ratio_to_vendor": rate / 500.0,
            "rounds": [dict(window, joules_per_launch=5.0)],
        }
    env = dict(data["environment"], sustain={"seconds": 10.0, "rounds": 2, "configs": "d128"})
    md = bench_report.markdown(env, results, {})
    assert "back to back for 10 s, 2 interleaved rounds" in md
    table = md[md.index("\n## Sustained") :].splitlines()
    rows = [line for line in table if line.startswith(f"| {results[0]['kernel']} |")]
    assert rows[0].endswith("| torch SDPA | 500.0 | 1.000 | - | - | - | - |")  # no samples
    assert rows[1].endswith("| 510.0 | 1.020 | 1500 | 690 | 100% | 5.000 |")
    assert f"| {results[0]['strategy']} |" in rows[1]


def test_stock_is_timed_again_with_the_variants_of_its_config() -> None:
    """The second timing pass holds stock's rows and the other variants of each config where
    a stock variant verified, those first (a shared cubin is timed under their name)."""
    ok, failed = {"passed": True}, {"passed": False}
    early = [
        {"kernel": "k", "config": c, "strategy": s, "verify": ok}
        for c in ("a", "b")
        for s in ("none", "optimal")
    ]
    late = [
        {"kernel": "k", "config": "a", "strategy": "builtin", "verify": ok},
        {"kernel": "k", "config": "b", "strategy": "builtin", "verify": failed},
    ]
    rows = bench_gpu.timed_with_stock(early, late)
    assert [(r["config"], r["strategy"]) for r in rows] == [
        ("a", "none"),
        ("a", "optimal"),
        ("a", "builtin"),
        ("b", "builtin"),
    ]
    assert bench_gpu.timed_once([dict(r, compile={"binary": "x"}) for r in rows[:3]])[0] == [
        dict(rows[0], compile={"binary": "x"})
    ]


def test_each_sustained_vendor_timing_heads_its_own_rows() -> None:
    """Rows of one config measured against different vendor timings (results merged from
    several runs) are listed under their own timing, not under the first one."""
    data = json.loads(FINAL.read_text())
    first = next(r for r in data["results"] if "rate" in (r.get("bench") or {}))
    rows = [
        dict(first, strategy=s, bench=dict(first["bench"])) for s in ("none", "builtin", "triton")
    ]
    vendors = [{"label": "ref", "sustained": {"rate": rate, "rounds": []}} for rate in (10.0, 20.0)]
    for row, vendor in zip(rows, (vendors[0], vendors[1], vendors[0]), strict=True):
        row["bench"]["vendor"] = vendor
        row["bench"]["sustained"] = {"rate": 10.0, "ratio_to_vendor": 1.0, "rounds": []}
    labels = [line.split("|")[3].strip() for line in bench_report._sustained_table(rows)[7:]]
    assert labels == ["ref", "none", "triton", "ref", "builtin"]


def test_sustained_timing_binds_each_variant_and_rates_it_against_the_vendor(monkeypatch):
    """bench_gpu._sustained on stand-ins (no GPU): each job's window runs its own kernel,
    the vendor's runs the reference, and each row's ratio is to the vendor's median rate."""
    import contextlib
    import types

    from benchmarks.gpu import gpu_power

    monkeypatch.setitem(
        sys.modules, "torch", types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=int))
    )
    monkeypatch.setattr(
        gpu_power.Sampler, "running", contextlib.contextmanager(lambda s: iter([s]))
    )
    monkeypatch.setattr(gpu_power, "sustain", lambda fn, seconds, sync: (fn(), 1.0, 0.0, 1.0))
    module = types.SimpleNamespace(KERNEL=types.SimpleNamespace(arg_names=[], params=[]))
    # launches per window: the reference 100, job a 110, job b 90 (as if the kernel ran)
    per_window = {"ref": 100, "kernel a": 110, "kernel b": 90}

    def launch():
        return per_window[module.KERNEL.compiled]

    rows = [{"job": j, "bench": {}} for j in ("a", "b")]
    vendor_row: dict = {}
    compiled = {(j, "kernel"): f"kernel {j}" for j in ("a", "b")}
    sustain = bench_gpu.Sustain(seconds=1.0, rounds=2)
    reference = {"fn": lambda: per_window["ref"]}
    bench_gpu._sustained(module, compiled, reference, vendor_row, rows, launch, 1e12, sustain)
    assert vendor_row["sustained"]["rate"] == pytest.approx(100.0)
    assert [r["bench"]["sustained"]["ratio_to_vendor"] for r in rows] == pytest.approx([1.1, 0.9])
    assert all(len(r["bench"]["sustained"]["rounds"]) == 2 for r in rows)


def test_a_decision_check_choice_is_not_a_fallback() -> None:
    """The drop-in's decision check may build another strategy's kernel; only a failed attempt
    (`dropin.fallbacks`) makes the row a fallback."""

    def row(fallbacks: list[dict]) -> dict:
        dropin = {"strategy_used": "none", "fallbacks": fallbacks, "decision": {"rule": "r"}}
        return {"strategy": "optimal", "compile": {"dropin": dropin}, "verify": {"passed": True}}

    assert bench_strategies.status_of(row([])) == "ok"
    assert bench_strategies.status_of(row([{"strategy": "optimal"}])) == "FALLBACK->none"
    assert not bench_strategies.is_our_failure(row([]))

"""The plan sweep's variants, its analysis (dataset, headroom) and the model fit, on
synthetic runs (no GPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.analysis import fit_sweep
from benchmarks.common import stats, variants
from benchmarks.common.variants import Variant
from benchmarks.gpu import sweep_plans


def test_variant_names_round_trip() -> None:
    for v in variants.sweep(4):
        assert variants.parse(v.name) == v
        assert "," not in v.name and " " not in v.name
    assert variants.parse("heuristic") is None  # a plain bench strategy
    assert variants.parse("explore:3") == Variant("explore:3")
    assert variants.parse("optimal~ov0~wg0~s-1") == Variant("optimal", False, False, -1)
    for bad in ("builtin", "triton~ov0", "explore:x", "heuristic~zz", "none~s+"):
        assert variants.parse(bad) is None


def test_sweep_covers_ranks_knobs_and_stages() -> None:
    names = [v.name for v in variants.sweep(3)]
    assert names[:3] == ["explore:0", "explore:1", "explore:2"]
    assert {"heuristic~ov0", "heuristic~wg0", "explore:0~ov0", "explore:0~wg0"} <= set(names)
    assert {"heuristic~tt1", "explore:0~tt1"} <= set(names)
    assert {"none~s-1", "none~s+1", "explore:0~s+1"} <= set(names)
    assert len(names) == len(set(names))
    assert Variant("none", stage_delta=1).num_stages(3) == 4
    assert Variant("heuristic", overlap_wgmma=False).enable_keywords() == {
        "overlap_wgmma": False,
        "release_per_warp_group": True,
        "take_turns": False,
    }


def row(strategy: str, binary: str, rounds: list[float], ii: int = 100, ok: bool = True) -> dict:
    return {
        "kernel": "gemm_tma",
        "config": "c1",
        "strategy": strategy,
        "compile": {
            "binary": binary,
            "dropin": {"loops": [{"loop": 0, "ii": ii, "plan": {"partitions": [{}, {}]}}]},
        },
        "verify": {"passed": ok},
        "bench": {"ms_rounds": rounds} if ok else {},
    }


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    rows = [
        row("none", "n", [2.0, 2.0, 2.02], ii=120),
        row("heuristic", "h", [1.5, 1.51, 1.49]),
        row("optimal", "h", [1.5, 1.51, 1.49]),
        row("explore:0", "h", [1.5, 1.51, 1.49]),
        row("explore:1", "e1", [1.45, 1.46, 1.45]),
        row("explore:2", "e2", [1.2, 1.2, 1.21], ii=101),
        row("triton", "t", [1.7, 1.7, 1.7]),
        row("heuristic~s+1", "s", [1.0, 1.0, 1.0]),
        row("explore:3", "bad", [], ok=False),
    ]
    path = tmp_path / "run" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"environment": {"git_revision": "abc"}, "results": rows}))
    return path


def test_dataset_counts_each_binary_once(run_file: Path) -> None:
    records = sweep_plans.dataset(sweep_plans.load_rows([run_file]))
    assert [r["binary"] for r in records] == ["s", "e2", "e1", "h", "t", "n"]  # fastest first
    h = next(r for r in records if r["binary"] == "h")
    assert h["variants"] == ["heuristic", "optimal", "explore:0"]
    assert h["ms"] == 1.5 and abs(h["spread"] - 0.02 / 1.5) < 1e-12
    assert h["loops"][0]["ii"] == 100 and h["revision"] == "abc"


def test_headroom_separates_plans_from_knobs(run_file: Path) -> None:
    rows = sweep_plans.load_rows([run_file])
    (entry,) = sweep_plans.headroom(sweep_plans.dataset(rows), rows)
    assert entry["best"] == ["heuristic~s+1"] and entry["best_plan"] == ["explore:2"]
    assert entry["binaries"] == 6 and entry["plan_binaries"] == 4  # triton, ~s+1 excluded
    assert abs(entry["heuristic"]["slowdown"] - 0.5) < 1e-9
    assert abs(entry["heuristic"]["plan_slowdown"] - 0.25) < 1e-9
    assert not entry["heuristic"]["tie_with_best_plan"]
    assert entry["not_verified"] == ["explore:3"]
    text = sweep_plans.headroom_markdown([entry])
    assert "| gemm_tma | c1 | 4 | explore:2 | 1.200 | +66.7% | +25.0% | +25.0% |" in text


def test_ties_use_the_larger_spread() -> None:
    a = {"ms": 1.0, "spread": 0.0}
    assert stats.tie(a, {"ms": 1.019, "spread": 0.0})  # under the 2% floor
    assert not stats.tie(a, {"ms": 1.05, "spread": 0.01})
    assert stats.tie(a, {"ms": 1.05, "spread": 0.06})


def test_fit_reports_pairs_and_the_held_out_rule(run_file: Path) -> None:
    records = sweep_plans.dataset(sweep_plans.load_rows([run_file]))
    report = fit_sweep.report(records)
    (config,) = report["per_config"]
    assert config["n"] == 4 and config["distinct_ii"] == 3  # n, h, e1, e2 (not triton, s+1)
    assert report["pairs"] == 6
    # none (II 120) is slowest and e2 (II 101) fastest: the model orders those pairs wrongly
    # where II 100 < 101 but 1.5 ms > 1.2 ms.
    assert report["pairs_ordered_right"] < report["pairs_beyond_noise_with_ii_difference"]
    (held,) = report["leave_one_family_out"]
    assert held["chose"] == "same plan" and held["slowdown"] == pytest.approx(0.25)
    assert "leave one family out" in fit_sweep.text(report)

"""benchmarks/cpu/bench_scale.py: its loops, one measurement and the report (CPU only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.cpu import bench_scale

ROOT = Path(__file__).resolve().parent.parent

GEMM = ROOT / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


def test_instances_are_kernel_configs_on_both_targets() -> None:
    from corpus.kernels import attention_unrolled

    assert {i.target for i in bench_scale.INSTANCES} == {"sm90", "sm100"}
    assert all(i.config in attention_unrolled.CONFIGS for i in bench_scale.INSTANCES)
    unrolls = [i.unroll for i in bench_scale.INSTANCES]
    assert min(unrolls) == 1 and max(unrolls) >= 100


def test_measure_one_loop() -> None:
    row = bench_scale.measure(GEMM, time_limit=20.0, workers=1, runs=1)
    assert (row["target"], row["ops"]) == ("sm_90", 7)
    assert row["status"] == row["optimal_status"] == "OPTIMAL" and row["gap"] == 0.0
    assert row["ii"] == row["optimal_ii"] <= row["heuristic_ii"]
    assert row["optimal_stopped_by"] == row["heuristic_stopped_by"] == ""
    assert 0 <= row["first_solution_s"] <= row["proof_s"] and row["ii_bound"] == row["ii"]
    assert row["peak_rss_mb"] >= row["base_rss_mb"] > 0
    text = bench_scale.markdown(
        {**dict.fromkeys(("date", "revision", "machine", "load_before", "load_after"), "x")}
        | {"time_limit": 20.0, "workers": 1, "runs": 1},
        [row],
    )
    assert "| sm_90 | t128x128x64_w4_s4 | 7 |" in text and "OPTIMAL" in text


@pytest.mark.triton
def test_unrolled_loops_grow_with_the_unroll_factor(tmp_path: Path) -> None:
    from ws_solver import ir
    from ws_solver.model.dfg import build_graphs
    from ws_solver.model.kinds import NodeRole

    tile = bench_scale.CORPUS_TILE
    instances = [bench_scale.Instance(tile, u, "sm100") for u in (1, 2)]
    ops = []
    for path in bench_scale.generate(instances, tmp_path):
        (graph,) = build_graphs(ir.parse(path.read_text()))
        ops.append(sum(1 for n in graph.nodes if n.role == NodeRole.OP))
    assert ops == [31, 62]  # the corpus's attention loop, then twice its ops

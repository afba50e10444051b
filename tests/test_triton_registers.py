"""Plans as Triton's register allocation lowers them: the warps `optimize_partition_warps`
leaves each region, and the budget `AllocateWarpGroups` shares out. On sm_100 attention's
correction partition, planned at 4 warps, was lowered at 8, its request then overflowed the
budget, Triton emitted no setmaxnreg and the kernels spilled
(benchmarks/results/2026-12-02-sm100-registers)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.heuristic import decide
from ws_solver.model.check import check_plan
from ws_solver.model.cost_table import cost_table, kept_warps
from ws_solver.model.dfg import build_graphs
from ws_solver.model.plan import Partition, Plan
from ws_solver.model.resources import padded_warps
from ws_solver.model.target import SM100, target_for
from ws_solver.pipeline.partition import SolveOptions, plan_loop

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FOLDERS = {"3.6.0": CORPUS / "ttgir", "3.9.0": CORPUS / "ttgir-3.9"}
SM100_FILES = sorted(p.name for p in FOLDERS["3.6.0"].glob("*.sm100.ttgir"))


@pytest.mark.parametrize(
    ("tensor_bytes", "num_warps", "kept"),
    [
        (0, 8, 1),
        (128 * 64 * 4, 8, 4),
        (128 * 128 * 4, 8, 8),
        (128 * 64 * 4, 4, 2),
        (128 * 128 * 4, 4, 4),
    ],
)
def test_kept_warps_is_where_tritons_halving_stops_at_best(tensor_bytes, num_warps, kept):
    assert kept_warps(SM100, num_warps, tensor_bytes) == kept


@pytest.mark.parametrize("triton", sorted(FOLDERS))
@pytest.mark.parametrize("name", SM100_FILES)
def test_regions_get_at_least_the_warps_triton_keeps(name: str, triton: str) -> None:
    """Every specialized sm_100 plan (heuristic and optimal) passes its check, so each region
    has at least the warps Triton's halving can leave it. The case that spilled: attention
    d128's correction (a 64 KiB accumulator tile) was planned at 4 warps; Triton kept 8."""
    module = ir.parse((FOLDERS[triton] / name).read_text())
    for graph in build_graphs(module):
        target = target_for(graph.target, triton)
        table = cost_table(graph, target)
        heuristic, _ = decide(graph, target)
        optimal, _, _ = plan_loop(graph, target, "optimal", SolveOptions(cache=False))
        for plan in (heuristic, optimal):
            if not plan.specialized:
                continue
            assert check_plan(plan, graph, target) == []
            for p in plan.partitions[1:]:
                tile = max(
                    max(table.nodes[n].live_bytes, table.nodes[n].transient_bytes)
                    for n in plan.nodes_in(p.id)
                )
                assert p.warps >= kept_warps(target, graph.num_warps, tile)
                if tile >= 128 * 128 * 4 and graph.num_warps == 8:
                    assert p.warps == 8, (name, plan.strategy, p)


def test_a_plan_over_tritons_budget_is_refused() -> None:
    """attention_bwd d128 on sm_100: 20 warps (8 + 4 + two 1-warp regions, each padded to a
    warp group), where Triton shares out 96 registers a thread, 61,440 in all. The plan
    uses exactly that; 8 more registers in its default region would leave it short. (Its
    S and dP hand-offs need 576 TMEM columns on a real SM, so the check runs on an SM with
    twice the tensor memory, to keep to registers.)"""
    name = "attention_bwd.d128_n128m64_w8_s2.sm100.ttgir"
    (graph,) = build_graphs(ir.parse((FOLDERS["3.6.0"] / name).read_text()))
    wide = replace(SM100, tmem_columns=2 * SM100.tmem_columns)
    plan, _ = decide(graph, wide)
    assert sum(padded_warps(wide, p.warps) for p in plan.partitions) == 20
    assert check_plan(plan, graph, wide) == []
    assert any("tensor-memory columns exceed 512" in p for p in check_plan(plan, graph, SM100))
    first = plan.partitions[0]
    richer = (Partition(0, first.warps, first.registers + 8, first.stage, first.role),)
    over = Plan(
        plan.loop, plan.target, plan.assignment, richer + plan.partitions[1:], plan.channels
    )
    problems = check_plan(over, graph, wide)
    assert any("Triton shares out at 20 warps" in p for p in problems), problems

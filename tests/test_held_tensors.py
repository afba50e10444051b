"""Register tensors a partition holds across a wait for another partition's
(ws_solver/model/held_tensors.py), on the persistent GEMM's gelu epilogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.strategy import Strategy
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.held_tensors import held_bytes
from ws_solver.model.plan import Plan
from ws_solver.model.resources import register_bytes, registers_needed
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan
from ws_solver.pipeline.partition import SolveOptions, plan_loop

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FOLDERS = {"3.6.0": CORPUS / "ttgir", "3.9.0": CORPUS / "ttgir-3.9"}
GELU = "gemm_persistent.t128x128x64_gelu_w4_s3.{}.ttgir"
TILE = 128 * 128 * 4  # the fp32 output tile


def _table(triton: str, capability: int):
    text = (FOLDERS[triton] / GELU.format(f"sm{capability}")).read_text()
    (graph,) = build_graphs(ir.parse(text))
    return graph, cost_table(graph, target_for(capability, triton))


def _tanh_round_trip(graph, table) -> tuple[Plan, set[int]]:
    """The plan the optimum was before: the tile sent to a partition of its own for the
    tanh and back (the ops between the tile and the divide), everything else in one."""
    single = single_partition_plan(graph, table.target, Strategy.NONE)
    divide = next(n.id for n in graph.ops() if n.op_name == "arith.divf")
    tile = next(h.held for h in table.held if h.receiver == divide)
    away = set(range(tile + 1, divide))
    assignment = tuple((1,) if n in away else a for n, a in enumerate(single.assignment))
    plan = Plan(single.loop, single.target, assignment, single.partitions, single.channels)
    return plan, {n for n, a in enumerate(assignment) if 0 in a}


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_on_sm90_register_tensors_do_not_cross_so_nothing_is_held(triton: str) -> None:
    _, table = _table(triton, 90)
    assert table.held == ()


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_the_tile_kept_across_the_tanh_round_trip_counts_twice(triton: str) -> None:
    graph, table = _table(triton, 100)
    plan, kept = _tanh_round_trip(graph, table)
    largest = max(c.transient_bytes for c in table.nodes)
    assert largest == TILE
    assert held_bytes(table.held, kept) == 2 * TILE
    assert register_bytes(table, kept) == 2 * TILE
    # Unsplit, nothing is received: the need is the largest transient, as before.
    assert register_bytes(table, range(len(graph.nodes))) == largest
    # The tanh partition too: it keeps its first product while it reads the tile again.
    assert held_bytes(table.held, plan.nodes_in(1)) == 2 * TILE


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_the_optimum_covers_what_its_partitions_hold(triton: str) -> None:
    # Before the held tensors were counted, 3.9's optimum made the round trip at 208
    # registers and ptxas spilled 1440 bytes (benchmarks/results/2026-12-02-held-tensors).
    graph, table = _table(triton, 100)
    plan, why, _ = plan_loop(graph, table.target, "optimal", SolveOptions(cache=False))
    assert len(plan.partitions) > 1, why
    for p in plan.partitions:
        assert registers_needed(table, plan.nodes_in(p.id), p.warps) <= p.registers

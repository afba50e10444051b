"""Tensor memory as Triton allocates it (sm_100): a buffer that MMAs write and tmem_loads
read in other partitions takes two copies (`tmem_handoffs.TmemHandoff`), and a 16-bit
operand takes a 32-bit cell per element. Measured: attention_bwd d128's specialized kernels
need 576 columns and trap at launch (benchmarks/results/2026-12-02-tmem-handoffs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.strategy import Strategy
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.kinds import TMEM_LOAD, NodeKind
from ws_solver.model.plan import Plan
from ws_solver.model.resources import shared_and_tensor_memory
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan
from ws_solver.pipeline.partition import SolveOptions, plan_loop

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FOLDERS = {"3.6.0": CORPUS / "ttgir", "3.9.0": CORPUS / "ttgir-3.9"}
BWD = "attention_bwd.d128_n128m64_w8_s2.sm100.ttgir"
FWD = "attention_fwd.d128_m128n128_w8_s2.sm100.ttgir"


def _table(name: str, triton: str):
    (graph,) = build_graphs(ir.parse((FOLDERS[triton] / name).read_text()))
    return graph, cost_table(graph, target_for(100, triton))


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_the_backward_loops_s_and_dp_are_handed_off_its_gradients_are_not(triton: str) -> None:
    graph, table = _table(BWD, triton)
    handoffs = table.tmem_handoffs
    assert len(handoffs) == 2  # S^T and dP^T: fresh each iteration, read in the loop
    for h in handoffs:
        assert [graph.nodes[n].kind for n in h.writers] == [NodeKind.MMA]
        assert {graph.nodes[n].op_name for n in h.readers} == {TMEM_LOAD}
        assert table.tmem_columns_of[h.buffer] == 64  # 128 x 64 fp32
    # dK and dV accumulate over the loop and are read after it: one copy each.
    assert table.hoisted_tmem_columns == 64 + 64 + 128 + 128
    # The f16 operands (P^T, dS^T) staged in TMEM for the MMAs: 128 x 64, a cell each.
    assert sorted(table.loop_tmem_columns.values()) == [64, 64]


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_the_forward_accumulator_is_rescaled_in_place_so_only_s_is_handed_off(triton) -> None:
    graph, table = _table(FWD, triton)
    (handoff,) = table.tmem_handoffs
    assert table.tmem_columns_of[handoff.buffer] == 128  # S: 128 x 128 fp32
    stored = {n.id for n in graph.ops() if n.op_name == "ttng.tmem_store"}
    assert not stored & {*handoff.writers, *handoff.readers}


@pytest.mark.parametrize("triton", sorted(FOLDERS))
def test_a_split_between_writer_and_reader_counts_the_second_copy(triton: str) -> None:
    graph, table = _table(BWD, triton)
    target = table.target
    single = single_partition_plan(graph, target, Strategy.NONE)
    _, one_copy = shared_and_tensor_memory(single, table)
    assert one_copy == 384 + 128
    # The same plan with every reader of the hand-offs moved to a partition of its own.
    readers = {n for h in table.tmem_handoffs for n in h.readers}
    assignment = tuple((1,) if n in readers else a for n, a in enumerate(single.assignment))
    split = Plan(single.loop, single.target, assignment, single.partitions, single.channels)
    _, two_copies = shared_and_tensor_memory(split, table)
    assert two_copies == one_copy + 64 + 64 > target.tmem_columns


@pytest.mark.parametrize("strategy", ["heuristic", "optimal"])
def test_no_plan_of_the_backward_loop_needs_more_than_the_sm_has(strategy: str) -> None:
    # On 3.9 every split puts S's MMA and its tmem_load apart (R7 widened), so every split
    # needs 576 columns: both strategies keep the loop whole.
    graph, table = _table(BWD, "3.9.0")
    plan, why, _ = plan_loop(graph, table.target, strategy, SolveOptions(cache=False))
    assert len(plan.partitions) == 1, why
    assert shared_and_tensor_memory(plan, table)[1] <= table.target.tmem_columns


def test_the_persistent_gemms_accumulator_zeroed_by_a_store_is_handed_off_too() -> None:
    # Allocated in the loop, zeroed by a tmem_store, filled by the MMA of the K loop, read by
    # the epilogue: 3.9 gave the optimum's kernel 256 columns (two copies of 128).
    graph, table = _table("gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir", "3.9.0")
    (handoff,) = table.tmem_handoffs
    assert table.tmem_columns_of[handoff.buffer] == 128
    kinds = {graph.nodes[n].op_name for n in handoff.writers}
    assert kinds == {"ttng.tc_gen5_mma", "ttng.tmem_store"}
    plan, _, _ = plan_loop(graph, table.target, "optimal", SolveOptions(cache=False))
    assert len(plan.partitions) > 1 and shared_and_tensor_memory(plan, table)[1] == 256

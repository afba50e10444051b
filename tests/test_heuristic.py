"""The heuristic partitioner over the committed TTGIR corpus."""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.strategy import Strategy
from ws_solver.heuristic import RULE_NAMES, decide, partition
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.plan import complete_assignment, is_assignable
from ws_solver.model.target import SM100, target_for
from ws_solver.model.unspecialized import single_partition_plan

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
FILES = sorted(p.name for p in TTGIR.glob("*.ttgir"))


@cache
def graphs(name: str) -> tuple[LoopGraph, ...]:
    return tuple(build_graphs(ir.parse((TTGIR / name).read_text())))


def loops(pattern: str) -> list[tuple[str, LoopGraph]]:
    return [(f, g) for f in sorted(TTGIR.glob(pattern)) for g in graphs(f.name)]


def ops_named(graph: LoopGraph, name: str) -> list[int]:
    return [n.id for n in graph.nodes if n.op_name == name and n.role == NodeRole.OP]


def home(plan, node: int) -> int:
    """The one partition of a node that is not duplicated."""
    parts = plan.assignment[node]
    assert len(parts) == 1, f"node {node} runs in {parts}"
    return parts[0]


# -- every loop --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FILES)
def test_every_loop_gets_a_valid_plan(name: str) -> None:
    for graph in graphs(name):
        target = target_for(graph.target)
        for force in (False, True):
            plan, reason = decide(graph, target, force=force)
            assert check_plan(plan, graph, target) == [], (graph.name, force, reason)
            assert plan.strategy == Strategy.HEURISTIC
            assert plan.loop == graph.name and plan.target == target.name
            assert reason.startswith("specialized") == plan.specialized, reason


@pytest.mark.parametrize("name", FILES)
def test_deterministic(name: str) -> None:
    text = (TTGIR / name).read_text()
    first = [partition(g, force=True) for g in build_graphs(ir.parse(text))]
    second = [partition(g, force=True) for g in build_graphs(ir.parse(text))]
    assert [p.to_json() for p in first] == [p.to_json() for p in second]
    assert [p.merges for p in first] == [p.merges for p in second]


@pytest.mark.parametrize("name", FILES)
def test_merges_name_rules(name: str) -> None:
    for graph in graphs(name):
        plan = partition(graph, force=True)
        for m in plan.merges:
            assert m.rule in RULE_NAMES
            assert 0 <= m.src < len(graph.nodes) and 0 <= m.dst < len(graph.nodes)


@pytest.mark.parametrize("name", FILES)
def test_specialized_only_when_better(name: str) -> None:
    for graph in graphs(name):
        target = target_for(graph.target)
        plan, reason = decide(graph, target)
        single = evaluate(single_partition_plan(graph, target), graph, target).ii
        if plan.specialized:
            assert evaluate(plan, graph, target).ii < single, reason
        else:
            assert len(plan.partitions) == 1 and not plan.merges


def test_default_target_comes_from_the_graph() -> None:
    for _, graph in loops("attention_fwd.d64*.ttgir"):
        assert partition(graph) == partition(graph, target_for(graph.target))


# -- structure -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pattern", ["gemm_tma.*.sm90.ttgir", "gemm_tma.*.sm100.ttgir"])
def test_tma_gemm_has_a_load_partition(pattern: str) -> None:
    found = loops(pattern)
    assert found
    for _, graph in found:
        target = target_for(graph.target)
        plan = partition(graph, target, force=True)
        assert plan.specialized
        (mma,) = graph.of_kind(NodeKind.MMA)
        load_parts = {home(plan, n) for n in ops_named(graph, "tt.descriptor_load")}
        assert len(load_parts) == 1
        (load,) = load_parts
        assert load != home(plan, mma.id)
        assert load == len(plan.partitions) - 1  # the producer gets the highest id
        assert plan.partitions[load].role == "load"
        stage = 0 if target.mma_accumulator_in_registers else 1
        assert plan.partitions[home(plan, mma.id)].stage == stage
        assert plan.partitions[0].warps == graph.num_warps
        if not target.mma_accumulator_in_registers:
            assert plan.partitions[load].warps == 1


@pytest.mark.parametrize(
    "pattern", ["attention_fwd.d128*.sm100.ttgir", "attention_fwd.d64*.sm100.ttgir"]
)
def test_blackwell_attention_forward(pattern: str) -> None:
    found = loops(pattern)
    assert found
    for _, graph in found:
        plan = partition(graph, SM100, force=True)
        # Worth it without forcing too, now that the QK tmem_load's token travels alone
        # (a barrier, not 64 KiB of staged registers).
        unforced, reason = decide(graph, SM100)
        assert unforced == plan, reason
        (load,) = {home(plan, n) for n in ops_named(graph, "tt.descriptor_load")}
        (mma,) = {home(plan, n) for n in ops_named(graph, "ttng.tc_gen5_mma")}
        exp2s = ops_named(graph, "math.exp2")
        big = max(exp2s, key=lambda n: graph.nodes[n].elements)
        softmax = home(plan, big)
        (store,) = ops_named(graph, "ttng.tmem_store")
        correction = home(plan, store)
        if graph.num_warps == 8:
            # d128: Triton keeps a region holding the 128x128 fp32 tile at 8 warps, and two
            # 8-warp compute regions beside the load and MMA ones leave the default region
            # short of the registers Triton shares out: softmax and correction merge.
            assert len(plan.partitions) == 3 and softmax == correction == 0
            assert "registers" in {m.rule for m in plan.merges}
        else:
            assert len(plan.partitions) >= 4
            assert len({load, mma, softmax, correction}) == 4
            assert not any(
                graph.nodes[n].elements > 256 for n in exp2s if correction in plan.assignment[n]
            )
        # The correction rescales the output accumulator in tensor memory.
        names = {graph.nodes[n].op_name for n in plan.nodes_in(correction)}
        assert {"ttng.tmem_load", "arith.mulf", "ttng.tmem_store"} <= names
        acc = set(b.name for b in graph.nodes[store].buffers)
        (reader,) = [
            n
            for n in ops_named(graph, "ttng.tmem_load")
            if acc & {b.name for b in graph.nodes[n].buffers}
        ]
        assert home(plan, reader) == correction
        # Softmax: the QK tmem_load, the row max/sum and the big exp2 together.
        assert {graph.nodes[n].op_name for n in plan.nodes_in(softmax)} >= {
            "ttng.tmem_load",
            "tt.reduce",
            "math.exp2",
        }
        roles = [p.role for p in plan.partitions]
        assert roles[load] == "load" and roles[mma] == "mma"
        assert plan.partitions[mma].stage == 1 and plan.partitions[mma].warps == 1
        assert plan.partitions[softmax].warps >= 4 and plan.partitions[correction].warps >= 4


@pytest.mark.parametrize("pattern", ["attention_fwd.*.sm90.ttgir"])
def test_hopper_attention_forward(pattern: str) -> None:
    found = [(f, g) for f, g in loops(pattern) if "_ahead." not in f.name]
    assert found
    for _, graph in found:
        target = target_for(graph.target)
        plan = partition(graph, target, force=True)
        (load,) = {home(plan, n) for n in ops_named(graph, "tt.descriptor_load")}
        (consumer,) = {home(plan, n) for n in ops_named(graph, "ttng.warp_group_dot")}
        assert {home(plan, n) for n in ops_named(graph, "math.exp2")} == {consumer}
        assert load != consumer
        assert consumer == 0 and plan.partitions[0].warps == graph.num_warps
        assert plan.partitions[load].role == "load"
        # The accumulator iter arg stays with the wgmma that updates it.
        acc = [n.id for n in graph.nodes if n.role == NodeRole.ITER_ARG and n.elements > 128]
        assert acc and all(home(plan, n) == consumer for n in acc)


def test_attention_with_scores_ahead_does_not_fit_a_specialized_kernel() -> None:
    """S one block ahead keeps two score tiles live: about 250 registers per thread, more
    than the 168 a 12-warp kernel gets, so even a forced split is merged back."""
    # the ahead loop is each file's first; the causal kernel's second is its masked on-band loop
    found = [g for _, g in loops("attention_fwd.*_ahead.sm90.ttgir") if g.loop_index == 0]
    assert len(found) == 2
    for graph in found:
        plan, reason = decide(graph, target_for(graph.target), force=True)
        assert not plan.specialized and "register file" in reason


def test_row_reduce_is_not_specialized() -> None:
    found = loops("row_reduce.*.ttgir")
    assert found
    for _, graph in found:
        plan, reason = decide(graph, force=True)
        assert not plan.specialized and len(plan.partitions) == 1
        assert "MMA" in reason


def test_partition_cap_merges_and_records() -> None:
    target = dataclasses.replace(SM100, max_partitions=3)
    for _, graph in loops("attention_fwd.d64*.sm100.ttgir"):
        plan = partition(graph, target, force=True)
        assert len(plan.partitions) == 3
        assert any(m.rule == "cap" for m in plan.merges)
        assert check_plan(plan, graph, target) == []


@pytest.mark.parametrize("name", FILES)
def test_pointer_loaded_data_does_not_cross_partitions(name: str) -> None:
    """Triton 3.6 cannot hand a pointer load's registers (or the buffer staging them) to
    another partition, so they stay with their consumers."""
    for graph in graphs(name):
        plan = partition(graph, force=True)
        if not plan.specialized:
            continue
        pointer_loads = {n.id for n in graph.of_kind(NodeKind.LOAD) if n.op_name == "tt.load"}
        staging = {
            e.dst
            for e in graph.edges
            if e.src in pointer_loads and graph.nodes[e.dst].op_name == "ttg.local_alloc"
        }
        for e in graph.edges:
            if e.src in pointer_loads | staging and graph.nodes[e.dst].role == NodeRole.OP:
                assert set(plan.assignment[e.dst]) <= set(plan.assignment[e.src]), e


def test_if_yielding_an_mma_token_runs_in_the_mma_partition() -> None:
    """gemm_cond_reset (sm_100): the scf.if's `else` yields the MMA's token, so the if runs
    in the MMA's partition as well as in its body's (Triton 3.6's lowering rule)."""
    ((_, graph),) = loops("gemm_cond_reset.t128x128x64_g128_w4_s4.sm100.ttgir")
    (mma,) = graph.of_kind(NodeKind.MMA)
    (region,) = [n for n in graph.nodes if n.op_name == "scf.if" and n.role == NodeRole.OP]
    body = [n.id for n in graph.nodes if n.parent == region.id]
    # The heuristic's old split: the MMA in 0, the if's body in 1 (R4 now rejects it).
    decided = {n: (1,) if n in body else (0,) for n in range(len(graph.nodes))}
    assignment = complete_assignment(
        graph, {n: p for n, p in decided.items() if is_assignable(graph, n)}
    )
    results = [n.id for n in graph.nodes if n.role == NodeRole.IF_RESULT]
    token = next(n for n in results if graph.nodes[n].value_kind == "token")
    assert mma.id in {e.src for e in graph.in_edges(token)}
    parts = set(assignment[region.id])
    assert parts == {0, 1}
    assert set(assignment[mma.id]) <= parts
    assert all(set(assignment[n]) <= parts for n in results)
    assert all(set(assignment[n]) <= parts for n in body)


@pytest.mark.triton
def _lower(graph_file: str, plan_of) -> None:
    """Annotate a corpus file's loop with `plan_of(graph, target)` and run Triton's
    add_warp_specialize on it (raises when Triton rejects it)."""
    from tests.triton_util import capability, context
    from ws_solver.ir.annotate import annotate_loop
    from ws_solver.model.annotation import loop_annotation
    from ws_solver.model.dfg import build_graph, ws_loops
    from ws_solver.triton.toolchain.make_ttgir import parse_module_text, run_warp_specialize_only

    module = ir.parse((TTGIR / graph_file).read_text())
    (loop,) = ws_loops(module)
    graph = build_graph(module, loop)
    plan = plan_of(graph, target_for(graph.target))
    annotate_loop(loop.op, loop_annotation(graph, plan, tag=0))
    cap = capability(graph_file)
    run_warp_specialize_only(parse_module_text(module.print(), context(cap)), 4)


COND_RESET = "gemm_cond_reset.t128x128x64_g128_w4_s4.sm100.ttgir"


def _cond_reset_split(swap: bool):
    """The heuristic's former cond-reset split (MMA 0, compute 1, loads 2), spelled out in
    benchmarks/cpu/lowering_pairs.json (pair 4, rule R4); `swap`: partitions 0 and 1 swapped."""
    probe = pytest.importorskip("benchmarks.cpu.lowering_probe")
    (pair,) = [p for p in json.loads(probe.PAIRS.read_text()) if p["rule"] == "R4"]

    def plan_of(graph, target):
        return probe.plan_from_spec(graph, pair["loops"][0], pair["change"] if swap else None)

    return plan_of


@pytest.mark.triton36
def test_if_with_the_mma_partition_lowers() -> None:
    """Triton lowers the cond-reset split (if in the MMA's and the compute partition) when the
    compute partition is the default region and the MMA partition 1 (lowering rule R4)."""
    _lower(COND_RESET, _cond_reset_split(swap=True))


@pytest.mark.triton36
def test_if_with_the_mma_partition_numbered_otherwise_fails() -> None:
    """The same split with the MMA in partition 0: Triton rejects it, and so does the check."""
    with pytest.raises(RuntimeError):
        _lower(COND_RESET, _cond_reset_split(swap=False))


@pytest.mark.triton36
def test_heuristic_cond_reset_plan_lowers() -> None:
    """The heuristic's plan for cond-reset lowers, or it declines to specialize because R4
    wants the if's body in partition 0 and the kernel's warps cannot hold its registers."""
    ((_, graph),) = loops(COND_RESET)
    plan, reason = decide(graph, SM100)
    if plan.specialized:
        _lower(COND_RESET, partition)
    else:
        assert "lowering rule R4" in reason and reason.startswith("not specialized"), reason
        for force in (False, True):
            assert not partition(graph, SM100, force=force).specialized

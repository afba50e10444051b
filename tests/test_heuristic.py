"""The heuristic seed partitioner over the committed TTGIR corpus."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.heuristic_seed import RULE_NAMES, STRATEGY, decide, partition
from ws_solver.heuristic_seed import merge as merge_module
from ws_solver.model.cost import evaluate, single_partition_plan
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.target import SM100, target_for

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
            assert plan.check(graph, target) == [], (graph.name, force, reason)
            assert plan.strategy == STRATEGY
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
        assert len(plan.partitions) >= 4
        (load,) = {home(plan, n) for n in ops_named(graph, "tt.descriptor_load")}
        (mma,) = {home(plan, n) for n in ops_named(graph, "ttng.tc_gen5_mma")}
        exp2s = ops_named(graph, "math.exp2")
        big = max(exp2s, key=lambda n: graph.nodes[n].elements)
        softmax = home(plan, big)
        (store,) = ops_named(graph, "ttng.tmem_store")
        correction = home(plan, store)
        assert len({load, mma, softmax, correction}) == 4
        # The correction partition rescales the output accumulator in tensor memory.
        names = {graph.nodes[n].op_name for n in plan.nodes_in(correction)}
        assert {"ttng.tmem_load", "arith.mulf", "ttng.tmem_store"} <= names
        acc = set(b.name for b in graph.nodes[store].buffers)
        (reader,) = [
            n
            for n in ops_named(graph, "ttng.tmem_load")
            if acc & {b.name for b in graph.nodes[n].buffers}
        ]
        assert home(plan, reader) == correction
        assert not any(
            graph.nodes[n].elements > 256 for n in exp2s if correction in plan.assignment[n]
        )
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
    found = loops(pattern)
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
        assert plan.check(graph, target) == []


def test_user_fixed_partitions_are_never_merged(monkeypatch) -> None:
    (_, graph), *_ = loops("gemm_tma.t128x128x64_w4_s4.sm100.ttgir")
    load = ops_named(graph, "tt.descriptor_load")[0]
    alloc = next(e.dst for e in graph.out_edges(load))
    pins = {load: 1, alloc: 2}
    monkeypatch.setattr(merge_module, "fixed_partition", lambda node: pins.get(node.id))
    plan = partition(graph, SM100, force=True)
    assert not any(m.rule == "load_to_local_alloc" and m.src == load for m in plan.merges)
    assert home(plan, load) != home(plan, alloc)
    assert plan.check(graph, SM100) == []


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

"""The exact partitioner (ws_solver.encode): agreement with `evaluate`, never worse than its
hint, exact on small random loops (brute force), deterministic, infeasibility explained.

The corpus sweep (`-k corpus`) solves every loop of corpus/ttgir once, with a short
deterministic time limit, and shares the results between its tests.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from itertools import combinations, product
from math import ceil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ws_solver import ir
from ws_solver.core.options import SolverBudget
from ws_solver.encode import GROUPS, LIMIT_GROUPS, STEPS, EncodeOptions, SolveResult, encode, solve
from ws_solver.encode.decode import fit
from ws_solver.encode.solve import fixed_plan_objective
from ws_solver.heuristic import partition
from ws_solver.model.channels import derive_channels, required_channels
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import Buffer, Edge, LoopGraph, MmaShape, Node
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.plan import (
    CHANNEL_DEPTHS,
    Channel,
    Partition,
    Plan,
    complete_assignment,
    region_members,
)
from ws_solver.model.resources import registers_needed, shared_and_tensor_memory
from ws_solver.model.target import SM90, SM100, Target, target_for
from ws_solver.model.unspecialized import single_partition_plan, single_partition_registers

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
FILES = sorted(p.name for p in TTGIR.glob("*.ttgir"))
TIME_LIMIT = 5.0  # deterministic seconds; every corpus loop needs well under one


@cache
def graphs(name: str) -> tuple[LoopGraph, ...]:
    return tuple(build_graphs(ir.parse((TTGIR / name).read_text())))


LOOPS = [(name, i) for name in FILES for i in range(len(graphs(name)))]


@cache
def solved(name: str, index: int) -> tuple[LoopGraph, Target, Plan, SolveResult]:
    """Each corpus loop solved once, hinted with the heuristic's plan."""
    graph = graphs(name)[index]
    target = target_for(graph.target)
    hint = partition(graph, target)
    return graph, target, hint, solve(graph, target, hint=hint, budget=SolverBudget(TIME_LIMIT))


def loop_id(case: tuple[str, int]) -> str:
    return f"{case[0].removesuffix('.ttgir')}#{case[1]}"


# -- (1)(2) the corpus: agreement with evaluate, never worse than the hint ----------------------
@pytest.mark.parametrize("case", LOOPS, ids=loop_id)
def test_corpus_plan_is_valid_and_agrees_with_evaluate(case: tuple[str, int]) -> None:
    graph, target, _, result = solved(*case)
    assert result.status == "OPTIMAL", result.note
    assert check_plan(result.plan, graph, target) == []
    assert result.plan.strategy == "optimal"
    cost = evaluate(result.plan, graph, target)
    assert cost.objective == result.objective
    assert cost.ii == result.ii
    assert result.bound == result.objective and result.gap == 0.0
    assert result.infeasible_groups == []


@pytest.mark.parametrize("case", LOOPS, ids=loop_id)
def test_corpus_never_worse_than_hint(case: tuple[str, int]) -> None:
    graph, target, hint, result = solved(*case)
    assert check_plan(hint, graph, target) == []
    assert result.hint_objective == evaluate(hint, graph, target).objective
    assert result.objective <= result.hint_objective
    single = evaluate(single_partition_plan(graph, target), graph, target)
    assert result.objective <= single.objective


@pytest.mark.parametrize("case", LOOPS[::7], ids=loop_id)
def test_corpus_model_scores_known_plans_like_evaluate(case: tuple[str, int]) -> None:
    """With the decision variables fixed to a plan, the model's objective is evaluate's."""
    graph, target, hint, result = solved(*case)
    enc = encode(graph, target)
    for plan in (hint, single_partition_plan(graph, target), result.plan):
        fitted = fit(enc, plan)
        assert check_plan(fitted, graph, target) == []
        cost = evaluate(fitted, graph, target)
        assert cost.objective <= evaluate(plan, graph, target).objective
        assert fixed_plan_objective(enc, fitted) == cost.objective


def test_groups_are_named_and_limits_guarded() -> None:
    graph = graphs("gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm100.ttgir")[0]
    enc = encode(graph, SM100)
    assert tuple(enc.groups) == GROUPS and set(LIMIT_GROUPS) <= set(GROUPS)
    empty = [g for g, constraints in enc.groups.items() if not constraints]
    assert empty == []  # lowering: R3/R5/R7/R8 bind this loop (no R1 pins on sm_100)
    assert enc.guards == {}
    guarded = encode(graph, SM100, EncodeOptions(assumptions=True))
    assert set(guarded.guards) == set(LIMIT_GROUPS)
    assert len(STEPS) == len(set(STEPS))


def test_wgmma_reading_hoisted_shared_memory_stays_in_partition_0() -> None:
    graph = graphs("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")[0]
    pinned = cost_table(graph, SM90).lowering.default_only
    assert pinned, "the QK wgmma reads Q, allocated before the loop"
    plan = solve(graph, SM90, budget=SolverBudget(TIME_LIMIT)).plan
    assert plan.specialized and all(plan.assignment[n] == (0,) for n in pinned)


def test_default_hint_is_the_heuristic() -> None:
    # A loop where CP-SAT beats the heuristic: attention on sm_100 (MMA and loads together).
    graph = graphs("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")[0]
    hint = partition(graph, SM100)
    result = solve(graph, SM100, budget=SolverBudget(TIME_LIMIT))
    assert result.hint_objective == evaluate(hint, graph, SM100).objective
    assert result.objective < result.hint_objective
    assert result.note == ""


def test_out_of_time_before_a_plan_returns_the_hint_with_a_bound() -> None:
    # So little deterministic time that CP-SAT stops before any plan: the hint comes back,
    # with the bound the search proved (0 here) rather than none, so its gap is defined.
    graph = graphs("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")[0]
    hint = partition(graph, SM90)
    result = solve(graph, SM90, hint=hint, budget=SolverBudget(1e-6, workers=1))
    assert result.status == "FEASIBLE" and "returning the hint" in result.note
    assert result.objective == result.hint_objective == evaluate(hint, graph, SM90).objective
    assert result.bound is not None and 0 <= result.bound <= result.objective
    assert result.gap is not None and 0.0 <= result.gap <= 1.0


# -- (4) determinism ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["attention_fwd.causal_d64_m128n64_w4_s3.sm100.ttgir", "row_reduce.r4_n1024_w4_s3.sm90.ttgir"],
)
def test_same_input_same_plan(name: str) -> None:
    graph = graphs(name)[-1]
    target = target_for(graph.target)
    first = solve(graph, target, budget=SolverBudget(TIME_LIMIT))
    second = solve(graph, target, budget=SolverBudget(TIME_LIMIT))
    assert first.plan.to_json() == second.plan.to_json()
    assert (first.objective, first.status) == (second.objective, second.status)


@pytest.mark.parametrize("limit", [0.05, 0.6])
def test_short_limit_is_still_deterministic_and_valid(limit: float) -> None:
    """Stopped by the deterministic limit (before any solution, or with one that is not
    proven): the same plan twice, valid, never worse than the hint."""
    graph = graphs("gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm100.ttgir")[0]
    runs = [solve(graph, SM100, budget=SolverBudget(limit)) for _ in range(2)]
    assert runs[0].plan.to_json() == runs[1].plan.to_json()
    for run in runs:
        assert run.status in ("FEASIBLE", "OPTIMAL")
        assert check_plan(run.plan, graph, SM100) == []
        assert run.objective == evaluate(run.plan, graph, SM100).objective
        assert run.objective <= run.hint_objective
        assert run.bound is None or run.bound <= run.objective
    if limit < 0.1:  # nothing found yet: the hint comes back, and says so
        assert runs[0].status == "FEASIBLE" and "hint" in runs[0].note
        assert runs[0].plan.strategy != "optimal"


# -- (5) infeasible loops -------------------------------------------------------------------------
def test_infeasible_shared_memory_is_reported() -> None:
    graph = graphs("gemm_tma.t128x128x64_w4_s4.sm90.ttgir")[0]
    tiny = dataclasses.replace(SM90, shared_memory_per_cta=1024)
    result = solve(graph, tiny, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "INFEASIBLE"
    assert result.infeasible_groups == ["shared_memory"]
    assert result.objective is None


def test_infeasible_tensor_memory_is_reported() -> None:
    graph = graphs("attention_fwd.d128_m128n128_w8_s2.sm100.ttgir")[0]
    small = dataclasses.replace(SM100, tmem_columns=128)
    result = solve(graph, small, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "INFEASIBLE"
    assert result.infeasible_groups == ["tensor_memory"]


def test_infeasible_warps_are_reported() -> None:
    """A wgmma needs a warp group, a one-warp-group CTA of 1-2 warp partitions cannot."""
    graph = graphs("gemm_tma.t128x128x64_w4_s4.sm90.ttgir")[0]
    narrow = dataclasses.replace(SM90, allowed_partition_warps=(1, 2), max_warps_per_cta=4)
    result = solve(dataclasses.replace(graph, num_warps=2), narrow, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "INFEASIBLE"
    assert result.infeasible_groups == ["min_warps"]


def test_one_partition_target_gives_the_unspecialized_plan() -> None:
    graph = graphs("attention_fwd.d64_m128n64_w4_s3.sm90.ttgir")[0]
    single = dataclasses.replace(SM90, max_partitions=1)
    result = solve(graph, single, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "OPTIMAL"
    assert not result.plan.specialized
    assert check_plan(result.plan, graph, single) == []


def test_unspecialized_plan_has_the_kernel_warps() -> None:
    """One partition runs the whole kernel: its warps are num_warps (8 here, not the fewest
    the tie-break would like) and its registers are no choice (left out of the tie-break)."""
    graph = graphs("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")[0]
    assert graph.num_warps == 8
    single = dataclasses.replace(SM90, max_partitions=1)
    result = solve(graph, single, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "OPTIMAL" and not result.plan.specialized
    (part,) = result.plan.partitions
    assert part.warps == 8
    assert part.registers == single_partition_registers(graph, single)
    assert result.plan == dataclasses.replace(
        single_partition_plan(graph, single), strategy="optimal"
    )
    four = dataclasses.replace(result.plan, partitions=(dataclasses.replace(part, warps=4),))
    assert any("kernel's 8 warps" in v for v in check_plan(four, graph, single))
    low = dataclasses.replace(result.plan, partitions=(dataclasses.replace(part, registers=24),))
    assert check_plan(low, graph, single) == []
    assert evaluate(low, graph, single).objective == result.objective


# -- the model: channels per value, regions, staging -------------------------------------------
def test_channels_are_per_value() -> None:
    """sm_100 attention: the QK tmem_load returns a 32 KiB tensor (softmax) and a token (the
    MMA partition); each is its own channel, the token a barrier-only one."""
    graph = graphs("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")[0]
    table = cost_table(graph, SM100)
    loads = [n.id for n in graph.nodes if n.op_name == "ttng.tmem_load"]
    for n in loads:
        kinds = {v.kind: v for v in table.values_of(n)}
        assert set(kinds) == {"tensor", "token"}
        token, tensor = kinds["token"], kinds["tensor"]
        assert (token.bytes, token.memory, token.staged, token.smem_unit) == (0, "", False, 0)
        assert (tensor.bytes, tensor.memory, tensor.staged) == (128 * 64 * 4, "shared", True)
        assert token.producer_busy < tensor.producer_busy
    plan = partition(graph, SM100)
    assert plan.specialized
    for c in plan.channels:
        cost = table.values[c.producer, c.value]
        assert (c.bytes, c.memory) == (cost.bytes, cost.memory)
        assert c.src in plan.assignment[c.producer]
        assert c.dst not in plan.assignment[c.producer]
        assert any(c.dst in plan.assignment[v] for v in cost.consumers)
    tokens = [
        c
        for c in plan.channels
        if c.producer in loads and table.values[c.producer, c.value].kind == "token"
    ]
    assert tokens and all(c.bytes == 0 for c in tokens)


def test_violations_check_channel_values_and_sources() -> None:
    graph = graphs("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")[0]
    plan = partition(graph, SM100)
    c = plan.channels[0]
    wrong_src = dataclasses.replace(c, src=c.dst)
    problems = check_plan(
        dataclasses.replace(plan, channels=(wrong_src, *plan.channels[1:])), graph, SM100
    )
    assert any("does not run it" in p for p in problems)
    other = next(v for v in ("%nope",) if (c.producer, v) not in cost_table(graph, SM100).values)
    renamed = dataclasses.replace(c, value=other)
    problems = check_plan(
        dataclasses.replace(plan, channels=(renamed, *plan.channels[1:])), graph, SM100
    )
    assert any("has no channel there" in p for p in problems)
    assert any("is not needed" in p for p in problems)
    assert plan.channel_depth(c.producer, c.dst, c.value) == c.depth
    assert plan.channel_depth(c.producer, c.dst, "%nope") is None


def _alloc_with_register_result() -> LoopGraph:
    """An in-loop allocation that also returns a register tensor, both read by one op, and
    a token-making op: node 0 the iter arg, 1 the allocation, 2 the reader, 3 the yield."""
    buf = Buffer("%m", "shared", 8192, inside_loop=True)
    nodes = (
        Node(0, NodeRole.ITER_ARG, NodeKind.NONE, "scf.for", "%i", -1, result_index=0,
             value_kind="scalar", out_bytes=4),
        Node(1, NodeRole.OP, NodeKind.VIEW, "ttg.local_alloc", "%m, %r", 1, elements=4096,
             out_bytes=8192 + 4096, buffers=(buf,)),
        Node(2, NodeRole.OP, NodeKind.NONE, "arith.addf", "%s", 2, elements=2048,
             out_bytes=8192, buffers=(buf,)),
        Node(3, NodeRole.TERMINATOR, NodeKind.NONE, "scf.yield", "scf.yield", 3),
    )  # fmt: skip
    edges = (
        Edge(0, 1, 0, "%i", "scalar", 4, 0),
        Edge(1, 2, 0, "%m", "memdesc", 8192, 4096, "shared"),
        Edge(1, 2, 0, "%r", "tensor", 4096, 2048),
        Edge(2, 3, 0, "%s", "tensor", 8192, 2048),
    )
    return LoopGraph("alloc", 0, "cuda:90", 4, 1, nodes, edges, loop_buffers=(buf,))


def test_staged_bytes_of_an_allocation_count_per_value() -> None:
    """A producer that is an in-loop allocation and also sends register data: the buffer is
    copied per stage of its channel, the register value staged per stage of its own (sm_100:
    on sm_90 register tensors do not cross, lowering rule R9)."""
    graph = _alloc_with_register_result()
    table = cost_table(graph, SM100)
    m, r = table.values[1, "%m"], table.values[1, "%r"]
    assert (m.alloc, m.staged, m.bytes, m.memory) == (1, False, 8192, "shared")
    assert (r.alloc, r.staged, r.bytes, r.memory) == (None, True, 4096, "shared")
    assignment = complete_assignment(graph, {0: (0, 1), 1: (1,), 2: (0,)})
    depths = {"%m": 3, "%r": 2}
    channels = derive_channels(graph, assignment, table, lambda u, v, q: depths[v])
    assert {(c.value, c.src, c.dst, c.depth) for c in channels} == {
        ("%m", 1, 0, 3),
        ("%r", 1, 0, 2),
    }
    parts = tuple(
        Partition(
            p, 4, registers_needed(table, [n for n, ps in enumerate(assignment) if p in ps], 4), 0
        )
        for p in (0, 1)
    )
    plan = Plan(graph.name, SM100.name, assignment, parts, channels)
    assert check_plan(plan, graph, SM100) == []
    assert shared_and_tensor_memory(plan, table) == (8192 * 3 + 4096 * 2, 0)
    cost = evaluate(plan, graph, SM100)
    assert cost.shared_memory == 8192 * 3 + 4096 * 2
    enc = encode(graph, SM100)
    assert (
        fixed_plan_objective(enc, fit(enc, plan))
        == evaluate(fit(enc, plan), graph, SM100).objective
    )
    result = solve(graph, SM100, hint=plan, budget=SolverBudget(TIME_LIMIT))
    assert result.status == "OPTIMAL" and result.objective <= cost.objective
    assert evaluate(result.plan, graph, SM100).objective == result.objective


@pytest.mark.parametrize("case", LOOPS, ids=loop_id)
def test_regions_contain_their_results_and_yielded_producers(case: tuple[str, int]) -> None:
    """Triton 3.6: an op's partitions contain its outputs' partitions, and an scf.if runs
    where the values it yields are produced."""
    graph, _, hint, result = solved(*case)
    for plan in (hint, result.plan):
        for node in graph.nodes:
            if node.role != NodeRole.OP or node.op_name not in ("scf.if", "scf.for"):
                continue
            have = set(plan.assignment[node.id])
            for m in region_members(graph, node.id):
                assert set(plan.assignment[m]) <= have, (node.label, m)


# -- (3) exact on small random loops: brute force over every plan ------------------------------
KIND_OPS = {
    NodeKind.LOAD: "tt.descriptor_load",
    NodeKind.MMA: "ttng.warp_group_dot",
    NodeKind.NONE: "arith.addf",
    NodeKind.SFU: "math.exp2",
    NodeKind.SCALAR: "arith.addi",
    NodeKind.VIEW: "ttg.local_alloc",
}

# Compute-heavy ops weigh more: they are what makes splitting a loop (and channels) pay. At
# most one duplicable node (a SCALAR op or a scalar iter arg) per loop keeps the brute force
# small.
KIND_DRAW = [NodeKind.SFU, NodeKind.NONE, *(k for k in KIND_OPS if k != NodeKind.SCALAR)]


def _op(i: int, kind: NodeKind, size: int, shared: bool) -> tuple[Node, str]:
    """An op of `kind` over `size` elements, and the kind of value it makes."""
    mma = MmaShape(64, 128, 64, "f16", True) if kind == NodeKind.MMA else None
    elements = 0 if kind == NodeKind.SCALAR else (64 * 128 if mma else size)
    buffers = ()
    if kind == NodeKind.VIEW:  # an in-loop shared buffer: copied per stage of its channels
        buffers = (Buffer(f"%v{i}", "shared", 2 * elements, inside_loop=True),)
    value = "scalar" if kind == NodeKind.SCALAR else "tensor"
    if kind == NodeKind.VIEW or (shared and value == "tensor"):
        value = "memdesc"  # passed through shared memory: channels only synchronize
    node = Node(
        i, NodeRole.OP, kind, KIND_OPS[kind], f"%v{i}", i, elements=elements,
        out_bytes=4 if kind == NodeKind.SCALAR else 2 * elements,
        io_bytes=2 * elements if kind == NodeKind.LOAD else 0, mma=mma, buffers=buffers,
    )  # fmt: skip
    return node, value


@st.composite
def small_loops(draw) -> tuple[LoopGraph, Target]:
    """A loop of <= 4 ops plus an iter arg and the yield, with a random DAG of
    same-iteration edges, maybe a back edge to the iter arg; and a 3-partition target.

    LOAD and MMA ops may also make an async token (a second value, sent on its own,
    barrier-only channel). With <= 2 ops, the loop may end in an `scf.if` whose `then`
    runs one op and yields its value while the `else` yields an earlier op's value (the
    region then runs where that producer runs too)."""
    count = draw(st.integers(2, 4))
    with_if = count <= 2 and draw(st.booleans())
    carried_tensor = draw(st.booleans())
    nodes = [
        Node(0, NodeRole.ITER_ARG, NodeKind.NONE, "scf.for", "%acc", -1, result_index=0,
             value_kind="tensor" if carried_tensor else "scalar",
             elements=1024 if carried_tensor else 0, out_bytes=4096 if carried_tensor else 4)
    ]  # fmt: skip
    values = [nodes[0].value_kind]
    tokens = [False]
    # 0: no SCALAR op. A scalar iter arg is duplicable too: one duplicable node at most.
    scalar_at = draw(st.integers(0, count)) if carried_tensor else 0
    for i in range(1, count + 1):
        kind = NodeKind.SCALAR if i == scalar_at else draw(st.sampled_from(KIND_DRAW))
        size = draw(st.sampled_from([1024, 8192, 16384]))
        node, value = _op(i, kind, size, draw(st.booleans()))
        nodes.append(node)
        values.append(value)
        tokens.append(kind in (NodeKind.LOAD, NodeKind.MMA) and draw(st.booleans()))

    def edge(src: int, dst: int, distance: int = 0, token: bool = False) -> Edge:
        n = nodes[src]
        if token:
            return Edge(src, dst, distance, f"%t{src}", "token", 0, 0)
        memory = "shared" if values[src] == "memdesc" else ""
        return Edge(src, dst, distance, f"%v{src}", values[src], n.out_bytes, n.elements, memory)

    pairs = [(a, b) for a in range(count + 1) for b in range(max(a + 1, 1), count + 1)]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=8, unique=True))
    edges = []
    for a, b in sorted(chosen):
        sent = draw(st.sampled_from(["value", "token", "both"])) if tokens[a] else "value"
        if sent in ("value", "both"):
            edges.append(edge(a, b))
        if sent in ("token", "both"):
            edges.append(edge(a, b, token=True))
    yielded = draw(st.integers(1, count))
    if with_if:
        region, child, inner_yield, result = count + 1, count + 2, count + 3, count + 4
        size = draw(st.sampled_from([1024, 8192]))
        nodes += [
            Node(region, NodeRole.OP, NodeKind.NONE, "scf.if", "%r", region),
            dataclasses.replace(
                _op(child, draw(st.sampled_from([NodeKind.NONE, NodeKind.SFU])), size, False)[0],
                parent=region,
            ),
            Node(inner_yield, NodeRole.TERMINATOR, NodeKind.NONE, "scf.yield", "scf.yield",
                 inner_yield, parent=region),
            Node(result, NodeRole.IF_RESULT, NodeKind.NONE, "scf.if", "%r", region,
                 result_index=0, value_kind="tensor", elements=size, out_bytes=2 * size),
        ]  # fmt: skip
        values += ["", "tensor", "", "tensor"]
        tokens += [False] * 4
        edges.append(edge(draw(st.integers(0, count)), region))  # the condition
        edges.append(edge(draw(st.integers(0, count)), child))  # the `then` op's input
        edges += [edge(child, inner_yield), edge(child, result)]
        edges.append(edge(draw(st.integers(1, count)), result))  # the `else` yield
        yielded = result
    last = len(nodes)
    nodes.append(Node(last, NodeRole.TERMINATOR, NodeKind.NONE, "scf.yield", "scf.yield", last))
    edges.append(edge(yielded, last))
    if draw(st.booleans()):  # a loop-carried value (else the iter arg is only read)
        edges.append(edge(yielded, 0, distance=1))
    # 8 warps: two warp groups may issue the wgmma (the shared stall, `cost.wgmma_stalls`).
    warps = draw(st.sampled_from([4, 8]))
    graph = LoopGraph("random", 0, "cuda:90", warps, 1, tuple(nodes), tuple(edges))
    target = dataclasses.replace(
        SM90,
        max_partitions=3,
        allowed_partition_warps=draw(st.sampled_from([(1, 4), (4, 8)])),
        shared_memory_per_cta=draw(st.sampled_from([232_448, 40_000])),
        max_mbarriers=draw(st.sampled_from([64, 4])),
    )
    return graph, target


def brute_force(graph: LoopGraph, target: Target) -> tuple[int | None, list[Plan]]:
    """The least `evaluate` objective over every plan `violations` accepts, and the valid
    plans with channels that were seen.

    Enumerated exhaustively: the partitions of each node (all non-empty subsets for
    duplicable ones), partition count, warps per partition, and which copy of a duplicated
    producer sends each channel. Two choices are taken at their dominant value instead:
    registers (the least legal value >= `registers_needed`; more only costs tie-break and
    register file, and one partition's are left out of the tie-break) and channel depths
    (for a fixed rest of the plan only the channel-latency term ceil(latency / depth) falls
    with depth, so for each level T of that term each channel takes the least depth that
    gets it to <= T). A block
    whose shallowest plan is invalid is skipped whole: the limits only tighten with depth
    and none depends on which copy sends.
    """
    table = cost_table(graph, target)
    best, with_channels = None, []
    for assignment, parts in _layouts(graph, target, table):
        needed = required_channels(graph, assignment, table)
        shallow = [assignment[u][0] for u, _, _, _ in needed], [1] * len(needed)
        if check_plan(
            _plan(graph, target, table, assignment, parts, needed, *shallow), graph, target
        ):
            continue
        for srcs in product(*(assignment[u] for u, _, _, _ in needed)):
            for depths in _depth_candidates(table, needed):
                plan = _plan(graph, target, table, assignment, parts, needed, srcs, depths)
                if check_plan(plan, graph, target):
                    continue
                objective = evaluate(plan, graph, target).objective
                best = objective if best is None else min(best, objective)
                if plan.channels:
                    with_channels.append(plan)
    return best, with_channels


def _layouts(graph: LoopGraph, target: Target, table):
    """Every (completed assignment, partitions) with each partition used, partition 0 at
    the kernel's warps (any other count is invalid), the others at any warps, and the
    registers each partition needs (one partition: any legal value, the tie-break leaves
    them out)."""
    for count in range(1, target.max_partitions + 1):
        ids = range(count)
        subsets = [s for r in ids for s in combinations(ids, r + 1)]
        options = [
            subsets if n in table.duplicable else [(p,) for p in ids] for n in table.assignable
        ]
        for choice in product(*options):
            if set().union(*choice) != set(ids):
                continue
            decided = dict(zip(table.assignable, choice, strict=True))
            assignment = complete_assignment(graph, decided)
            members = [[n for n, ps in enumerate(assignment) if p in ps] for p in ids]
            # Partition 0 has the kernel's warps (`check_plan`); the others any option.
            for rest in product(table.warp_options, repeat=count - 1):
                warps = (graph.num_warps, *rest)
                parts = tuple(
                    Partition(
                        p,
                        warps[p],
                        registers_needed(table, members[p], warps[p])
                        if count > 1
                        else target.setmaxnreg_min,
                        0,
                    )
                    for p in ids
                )
                yield assignment, parts


def _plan(graph, target, table, assignment, parts, needed, srcs, depths) -> Plan:
    channels = tuple(
        Channel(u, v, s, q, d, table.values[u, v].bytes, table.values[u, v].memory)
        for (u, v, _, q), s, d in zip(needed, srcs, depths, strict=True)
    )
    return Plan(graph.name, target.name, assignment, parts, channels)


def _depth_candidates(table, needed) -> list[tuple[int, ...]]:
    latencies = [table.values[u, v].latency for u, v, _, _ in needed]
    levels = {ceil(lat / d) for lat in latencies for d in CHANNEL_DEPTHS}
    found = set()
    for level in levels:
        found.add(
            tuple(
                next((d for d in CHANNEL_DEPTHS if ceil(lat / d) <= level), CHANNEL_DEPTHS[-1])
                for lat in latencies
            )
        )
    return sorted(found) or [()]


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@pytest.mark.slow
@given(small_loops())
def test_optimal_matches_brute_force(case: tuple[LoopGraph, Target]) -> None:
    graph, target = case
    hint = single_partition_plan(graph, target)
    result = solve(graph, target, hint=hint, budget=SolverBudget(TIME_LIMIT))
    expected, with_channels = brute_force(graph, target)
    if expected is None:
        assert result.status == "INFEASIBLE"
        return
    assert result.status == "OPTIMAL", result.note
    assert check_plan(result.plan, graph, target) == []
    assert evaluate(result.plan, graph, target).objective == result.objective
    assert result.objective == expected
    # The model scores any valid plan as evaluate does, not only its optimum.
    enc = encode(graph, target)
    for plan in with_channels[:: max(1, len(with_channels) // 4)]:
        fitted = fit(enc, plan)
        assert fixed_plan_objective(enc, fitted) == evaluate(fitted, graph, target).objective

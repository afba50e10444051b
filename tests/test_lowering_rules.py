"""Triton 3.6's lowering rules (ws_solver.model.lowering, docs/triton-lowering-rules.md):
each rule's minimal case is reported by `check_plan`, the heuristic and the solver never
return a plan that breaks one, and the model respects them on small cases.

The minimal cases are the pairs of benchmarks/cpu/lowering_pairs.json (spelled out node by node),
lowered through Triton 3.6 by `benchmarks/cpu/lowering_probe.py --pairs`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from test_encode import LOOPS, loop_id, solved

from ws_solver import ir
from ws_solver.encode import encode
from ws_solver.encode.decode import fit
from ws_solver.encode.solve import fixed_plan_objective
from ws_solver.heuristic import decide
from ws_solver.model.check import check_plan
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.lowering import lowering_rules, lowering_violations
from ws_solver.model.plan import Partition, Plan, complete_assignment, is_assignable
from ws_solver.model.target import SM90, SM100, target_for
from ws_solver.model.unspecialized import single_partition_plan

ROOT = Path(__file__).resolve().parent.parent
TTGIR = ROOT / "corpus" / "ttgir"
PAIRS = json.loads((ROOT / "benchmarks" / "cpu" / "lowering_pairs.json").read_text())


@cache
def graphs(name: str, folder: Path = TTGIR) -> tuple[LoopGraph, ...]:
    return tuple(build_graphs(ir.parse((folder / name).read_text())))


def rules_broken(graph: LoopGraph, plan: Plan) -> set[str]:
    """The rule names (R1, R2, ...) `check_plan` reports."""
    found = set()
    for problem in check_plan(plan, graph, target_for(graph.target)):
        if "lowering rule R" in problem:
            found.add(problem.split("lowering rule ")[1].split()[0].rstrip(":"))
    return found


def plan_of(graph: LoopGraph, where, warps: tuple[int, ...] | None = None) -> Plan:
    """A plan with each assignable node in `where(node)` (partition ids), completed for region
    ops; partition 0 has the kernel's warps. Registers are not chosen (the check says so)."""
    decided = {n.id: where(n) for n in graph.nodes if is_assignable(graph, n.id)}
    assignment = complete_assignment(graph, decided)
    count = 1 + max(p for parts in assignment for p in parts)
    warps = warps or (graph.num_warps,) * count
    parts = tuple(Partition(p, warps[p], 0, 0) for p in range(count))
    return Plan(graph.name, graph.target, assignment, parts, (), "test")


def pair_plans(index: int) -> tuple[LoopGraph, Plan, Plan]:
    """Minimal pair `index`: the graph, the plan as given and the plan with its one change."""
    pair = PAIRS[index]
    graph = graphs(pair["file"], ROOT / pair.get("ttgir_dir", "corpus/ttgir"))[pair.get("loop", 0)]
    spec = pair["loops"][pair.get("loop", 0)]
    assign = {k: tuple(v) for k, v in spec["assign"].items()}
    change = pair["change"]

    def where(swap: dict[int, int], moved: dict[str, tuple[int, ...]]):
        def at(node) -> tuple[int, ...]:
            parts = moved.get(node.label, assign.get(node.label, (0,)))
            return tuple(sorted(swap.get(p, p) for p in parts))

        return at

    if change[0] == "move":
        changed = where({}, {change[1]: (int(change[2]),)})
    else:
        a, b = int(change[1]), int(change[2])
        changed = where({a: b, b: a}, {})
    return graph, plan_of(graph, where({}, {})), plan_of(graph, changed)


def pair_index(rule: str, file_part: str = "") -> int:
    return next(i for i, p in enumerate(PAIRS) if p["rule"] == rule and file_part in p["file"])


# -- each rule's minimal case --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "file_part", "given", "changed"),
    [
        ("R1", "", {"R1"}, set()),  # the QK wgmma (hoisted Q) outside partition 0 / swapped in
        ("R3", "", set(), {"R3"}),  # %lse_36 (tt.load) moved away from its consumers
        ("R4", "", {"R4"}, set()),  # cond-reset: MMA 0, if body 1 / swapped: MMA 1, body 0
        ("R5", "", set(), {"R5"}),  # a truncf moved: its tmem_alloc feeds an MMA elsewhere
        ("R7", "", set(), {"R7"}),  # the S tmem_load joins its MMA in partition 2
        ("R8", "sm90", set(), {"R8"}),  # memdesc_trans moved into the load partition
        ("R8", "sm100", set(), {"R8"}),
    ],
)
def test_minimal_pair_is_reported(rule, file_part, given, changed) -> None:
    graph, before, after = pair_plans(pair_index(rule, file_part))
    assert (rule in rules_broken(graph, before)) == (rule in given)
    assert (rule in rules_broken(graph, after)) == (rule in changed)


def test_broadcast_of_a_pointer_load_is_seen_through() -> None:
    """R3: moving only the broadcast of a loaded tensor makes Triton clone the chain, so the
    load's data crosses (pair 3)."""
    index = next(i for i, p in enumerate(PAIRS) if p["change"][1] == "%p_t_43")
    graph, before, after = pair_plans(index)
    assert "R3" not in rules_broken(graph, before)
    assert "R3" in rules_broken(graph, after)


def test_split_wgmmas_are_reported() -> None:
    """R2, narrowed (sm_90): attention's PV wgmma in partition 1, the QK wgmma in 0 (pair 1)
    fails; the pair's fix (PV wgmma in 0) passes. One wgmma alone may run anywhere."""
    graph, before, after = pair_plans(pair_index("R2"))
    assert "R2" in rules_broken(graph, before)
    assert "R2" not in rules_broken(graph, after)
    (gemm,) = graphs("gemm_tma.t128x128x64_w4_s4.sm90.ttgir")
    lone = plan_of(gemm, lambda n: (1,) if n.kind == NodeKind.MMA else (0,))
    assert "R2" not in rules_broken(gemm, lone)


COND_RESET_90 = "gemm_cond_reset.t128x128x64_g128_w4_s4.sm90.ttgir"


def _cond_reset_split(moved_label: str | None):
    """cond-reset (sm_90): loads in partition 0, everything else in 1; `moved_label` (a node
    inside the scf.if) moved to partition 0."""
    (graph,) = graphs(COND_RESET_90)
    loads = {"tt.descriptor_load", "ttg.local_alloc"}

    def where(node) -> tuple[int, ...]:
        if node.op_name in loads and node.parent is None or node.label == moved_label:
            return (0,)
        if node.label == "%a":  # the loads' index math
            return (0,)
        return (1,)

    return graph, plan_of(graph, where)


def test_crossing_inside_a_split_if_is_reported() -> None:
    """R5: a value crossing into an scf.if that runs in two partitions has no consumer in
    exactly the receiving partition (Triton reads the if's partitions for nested uses)."""
    graph, whole = _cond_reset_split(None)
    assert not rules_broken(graph, whole) & {"R3", "R5", "R8"}
    graph, split = _cond_reset_split("%group_29")  # arith.divsi inside the if
    (region,) = [n.id for n in graph.ops() if n.op_name == "scf.if"]
    assert split.assignment[region] == (0, 1)
    assert "R5" in rules_broken(graph, split)


@pytest.mark.triton
def _lowered(name: str, plan: Plan) -> str:
    """Triton's verdict on `name` annotated with `plan` (its only WS loop), through the
    drop-in's lowering guard (a child process: an assertion cannot take pytest down)."""
    from triton.backends.nvidia.compiler import CUDAOptions

    from ws_solver.ir.annotate import annotate_loop
    from ws_solver.model.annotation import loop_annotation
    from ws_solver.model.dfg import build_graph, ws_loops
    from ws_solver.triton.guard.client import LoweringGuard, LoweringJob
    from ws_solver.triton.rewrites import chain as rewrites

    module = ir.parse((TTGIR / name).read_text())
    (loop,) = ws_loops(module)
    annotate_loop(loop.op, loop_annotation(build_graph(module, loop), plan, tag=0))
    cap = 90 if name.endswith(".sm90.ttgir") else 100
    options = CUDAOptions(num_warps=4, num_stages=4)
    hopper = cap == 90 and rewrites.hopper_fix() is not None
    job = LoweringJob(module.print(), cap, options, 4, (), False, hopper)
    guard = LoweringGuard()
    try:
        verdict = guard.probe(job, 60)
    finally:
        guard.shutdown()
    return "ok" if verdict.ok else verdict.reason


@pytest.mark.triton36  # lowers corpus/ttgir; R5's pair does not fail on 3.9 either (docs)
def test_crossing_inside_a_split_if_fails_in_triton() -> None:
    """The R5 case above, lowered: Triton's NVWSInsertAref asserts `consumers.size() > 0`;
    the same plan with the whole if in one partition lowers."""
    assert _lowered(COND_RESET_90, _cond_reset_split(None)[1]) == "ok"
    assert "consumers.size()" in _lowered(COND_RESET_90, _cond_reset_split("%group_29")[1])


def test_crossing_pointers_are_reported() -> None:
    """R11: the lse load in partition 1, its pointers (`tt.addptr`) computed in partition 0;
    with the addptr moved along, the pointers stay put."""
    (graph,) = graphs("attention_bwd.d128_n128m64_w8_s2.sm100.ttgir")
    (load,) = [n.id for n in graph.ops() if n.op_name == "tt.load" and "%lse" in n.label]
    (pointers,) = [e.src for e in graph.in_edges(load) if e.use and e.use[1] == 0]
    assert graph.nodes[pointers].op_name == "tt.addptr"
    apart = plan_of(graph, lambda n: (1,) if n.id == load else (0,))
    assert "R11" in rules_broken(graph, apart)
    together = plan_of(graph, lambda n: (1,) if n.id in (load, pointers) else (0,))
    assert "R11" not in rules_broken(graph, together)


def test_unspecialized_plans_break_no_rule() -> None:
    for name in ("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir", COND_RESET_90):
        for graph in graphs(name):
            target = target_for(graph.target)
            assert lowering_violations(graph, single_partition_plan(graph, target), target) == []


def test_rules_cover_the_reference_checker_on_the_pairs() -> None:
    """`lowering_violations` reports every strict rule benchmarks/cpu/lowering_probe.py's
    reference checker finds on the minimal pairs."""
    probe = pytest.importorskip("benchmarks.cpu.lowering_probe")
    strict = {"R1", "R3", "R4", "R5", "R7", "R8"}
    for index in range(len(PAIRS)):
        graph, before, after = pair_plans(index)
        cap = 90 if graph.target.endswith("90") else 100
        for plan in (before, after):
            reference = set(probe.rule_violations(graph, plan, cap)) & strict
            assert reference <= rules_broken(graph, plan), (index, reference)


def test_reference_checker_agrees_on_r6_r9_r11_for_forced_sm90_plans() -> None:
    """The heuristic's forced sm_90 plans obey the model's R6, R9 and R11, and the reference
    checker (written from the perturbation study, widened with the H200 runs) agrees."""
    probe = pytest.importorskip("benchmarks.cpu.lowering_probe")
    checked = 0
    for path in sorted(TTGIR.glob("*.sm90.ttgir")):
        for graph in graphs(path.name):
            plan, _ = decide(graph, SM90, force=True)
            if not plan.specialized:
                continue
            checked += 1
            reference = set(probe.rule_violations(graph, plan, 90)) & {"R6", "R9", "R11"}
            assert not reference, (path.name, reference)
    assert checked >= 5


# -- R4 numbering in the model ---------------------------------------------------------------------
COND_RESET_100 = "gemm_cond_reset.t128x128x64_g128_w4_s4.sm100.ttgir"


def test_r4_pins_partition_1_for_symmetry_breaking_and_hints() -> None:
    """R4 gives partition 1 a meaning: `fit` (hints) keeps the MMA's partition 1 and the
    symmetry breaking orders only partitions 2.. (else the R4 split would be cut off)."""
    (graph,) = graphs(COND_RESET_100)
    assert lowering_rules(graph, SM100).pins_partition_1
    graph, _, swapped = pair_plans(pair_index("R4"))
    (mma,) = [n.id for n in graph.ops() if n.kind == NodeKind.MMA]
    assert swapped.assignment[mma] == (1,)
    fitted = fit(encode(graph, SM100), swapped)
    assert fitted.assignment == swapped.assignment
    assert "R4" not in rules_broken(graph, fitted)


def test_heuristic_declines_cond_reset_for_r4() -> None:
    """The if's body cannot be the 4-warp default region (its registers), so no split lowers:
    the heuristic says so instead of returning the split Triton rejects."""
    (graph,) = graphs(COND_RESET_100)
    for force in (False, True):
        plan, reason = decide(graph, SM100, force=force)
        assert not plan.specialized
        assert "lowering rule R4" in reason


# -- every corpus loop --------------------------------------------------------------------------
@pytest.mark.parametrize("case", LOOPS, ids=loop_id)
def test_corpus_plans_break_no_rule(case: tuple[str, int]) -> None:
    """The heuristic (forced too) and the solver's plans lower, as far as the rules know."""
    graph, target, hint, result = solved(*case)
    for force in (False, True):
        plan, reason = decide(graph, target, force=force)
        assert lowering_violations(graph, plan, target) == [], (force, reason)
    assert lowering_violations(graph, hint, target) == []
    assert lowering_violations(graph, result.plan, target) == [], result.note


def test_rule_data_is_plain_and_targeted() -> None:
    """sm_90 has no TMEM rules and sm_100 no wgmma rules; rules name real nodes."""
    (attention,) = graphs("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")
    rules = lowering_rules(attention, SM90)
    assert rules.default_only and len(rules.same_partition) == 2
    assert not rules.tmem_ifs and not rules.tmem_owners
    (blackwell,) = graphs(COND_RESET_100)
    rules = lowering_rules(blackwell, SM100)
    assert not rules.default_only and not rules.same_partition
    assert rules.tmem_ifs and rules.tmem_owners
    for t in rules.tmem_ifs:
        assert blackwell.nodes[t.region].op_name == "scf.if"
        assert all(blackwell.nodes[b].parent == t.region for b in t.body)
        assert all(blackwell.nodes[b].role == NodeRole.OP for b in t.body)


# -- R12 (measured on the H200 plan sweep) -----------------------------------------------------
R12_GEMM = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"


def _gemm_w4(target: str) -> tuple[LoopGraph, object]:
    path = R12_GEMM / f"gemm_tma.t128x128x64_w4_s4.{target}.ttgir"
    (graph,) = build_graphs(ir.parse(path.read_text()))
    return graph, target_for(target.replace("sm", "sm_"))


def test_r12_loop_results_and_their_producers_stay_in_partition_0() -> None:
    graph, target = _gemm_w4("sm90")
    rules = lowering_rules(graph, target)
    carried = {n.id for n in graph.nodes if n.role == NodeRole.ITER_ARG and n.parent is None}
    wgmma = {n.id for n in graph.nodes if n.kind == NodeKind.MMA and n.role == NodeRole.OP}
    assert wgmma <= rules.loop_results and rules.loop_results & carried
    sm100_graph, sm100 = _gemm_w4("sm100")
    assert lowering_rules(sm100_graph, sm100).loop_results == frozenset()  # TMEM accumulator


def test_r12_rejects_the_wgmma_outside_partition_0() -> None:
    # The plan that ran 4.5x slower on the H200: the whole loop in partition 1, partition 0
    # idle with 24 registers (explore:1 of this config before R12).
    graph, target = _gemm_w4("sm90")
    decided = {n.id: (1,) for n in graph.nodes if is_assignable(graph, n.id)}
    scalar = next(n.id for n in graph.nodes if n.kind == NodeKind.SCALAR and n.id in decided)
    decided[scalar] = (0, 1)
    plan = Plan(
        loop=graph.name,
        target=target.name,
        assignment=complete_assignment(graph, decided),
        partitions=(Partition(0, 4, 24, 0), Partition(1, 4, 208, 0)),
        channels=(),
    )
    problems = check_plan(plan, graph, target)
    assert any("R12" in p for p in problems)
    # The exact model has the same rule: the plan's variable values are not a solution.
    assert fixed_plan_objective(encode(graph, target), plan) is None

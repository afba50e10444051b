"""Triton 3.9's lowering rules (model/lowering_facts.py, docs/triton-lowering-rules.md,
"Triton 3.9.0"): each rule that differs from 3.6 is reported per version by `check_plan`, and
the heuristic and the solver planning for 3.9 return plans that follow 3.9's rules.

The plans are the minimal pairs of benchmarks/cpu/lowering_pairs.json (their loop graphs are the
same in both corpus dumps) and corpus loops of corpus/ttgir-3.9.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_lowering_rules import graphs, pair_index, pair_plans, plan_of

from ws_solver.core.options import SolverBudget
from ws_solver.encode import encode, solve
from ws_solver.encode.constraints import NO_FREE_PARTITION, first_free_partition, symmetry_order
from ws_solver.encode.decode import fit
from ws_solver.heuristic import decide
from ws_solver.model.check import check_plan
from ws_solver.model.cost_table import cost_table
from ws_solver.model.graph import LoopGraph
from ws_solver.model.kinds import NodeKind
from ws_solver.model.lowering import lowering_rules, lowering_violations
from ws_solver.model.lowering_facts import LOWERING, lowering_facts
from ws_solver.model.plan import Plan
from ws_solver.model.target import SM90, SM100, target_for

ROOT = Path(__file__).resolve().parent.parent
TTGIR_39 = ROOT / "corpus" / "ttgir-3.9"
V36, V39 = "3.6.0", "3.9.0"
TIME_LIMIT = 5.0  # deterministic seconds


def broken(graph: LoopGraph, plan: Plan, version: str) -> set[str]:
    """The rule names `check_plan` reports when planning for Triton `version`."""
    found = set()
    for problem in check_plan(plan, graph, target_for(graph.target, version)):
        if "lowering rule " in problem:
            found.add(problem.split("lowering rule ")[1].split()[0].rstrip(":"))
    return found


def graph_39(name: str, index: int = 0) -> LoopGraph:
    return graphs(name, TTGIR_39)[index]


# -- the table ----------------------------------------------------------------------------------
def test_targets_default_to_36_and_take_a_version() -> None:
    assert target_for("sm_100") is SM100 and SM100.triton.version == V36
    t39 = target_for("sm_100", V39)
    assert t39.triton is LOWERING[V39] and t39.name == "sm_100" and t39 != SM100
    assert target_for("sm_100", V39) == t39 and hash(target_for("sm_100", V39)) == hash(t39)
    assert lowering_facts("3.9.0+git1234").version == V39
    with pytest.raises(ValueError, match=r"Triton 3\.7\.0: .*supported: 3\.6\.0, 3\.9\.0"):
        target_for("sm_90", "3.7.0")


def test_the_dropin_reads_the_inserted_default_partition_from_the_model() -> None:
    from ws_solver.triton.toolchain import versions

    for name, row in versions.SUPPORTED.items():
        assert row.inserts_default_partition == LOWERING[name].inserts_default_partition
    assert versions.SUPPORTED[V39].extra_default_partition(100) == 1
    assert versions.SUPPORTED[V39].extra_default_partition(90) == 0


# -- each rule per version ----------------------------------------------------------------------
def test_r1_and_r3_are_36_only() -> None:
    """Pair 15 A (the QK wgmma reading the hoisted Q outside partition 0) hangs 3.6 and
    lowers on 3.9; pair 2 B (a pointer load's data crossing) fails 3.6 and lowers on 3.9."""
    graph, hang, _ = pair_plans(15)
    assert "R1" in broken(graph, hang, V36)
    assert "R1" not in broken(graph, hang, V39)
    assert not lowering_rules(graph, target_for("sm_90", V39)).default_only
    graph, _, crossing = pair_plans(pair_index("R3"))
    assert "R3" in broken(graph, crossing, V36)
    assert "R3" not in broken(graph, crossing, V39)


def test_r4_is_reversed_on_39() -> None:
    """Pair 4 on cond-reset sm_100. A (MMA 0, if body 1) fails 3.6 and lowers on 3.9 (behind
    the default partition 3.9 inserts, which the model forbids: D0); B (MMA 1, body 0) is
    3.6's rule and fails on 3.9. The same plan behind a partition 0 of its own (MMA 1,
    body 2) follows both of 3.9's rules."""
    graph, mma_first, if_first = pair_plans(pair_index("R4"))
    assert "R4" in broken(graph, mma_first, V36)
    assert broken(graph, mma_first, V39) & {"R4", "D0"} == {"D0"}
    assert "R4" not in broken(graph, if_first, V36)
    assert "R4" in broken(graph, if_first, V39)
    shifted = plan_of(graph, lambda n: tuple(p + 1 for p in mma_first.assignment[n.id]))
    assert not broken(graph, shifted, V39) & {"R4", "D0"}
    assert lowering_rules(graph, SM100).pins_partition_1
    assert not lowering_rules(graph, target_for("sm_100", V39)).pins_partition_1


def test_r4_message_names_the_version() -> None:
    graph, _, if_first = pair_plans(pair_index("R4"))
    (message,) = [m for m in check_plan(if_first, graph, target_for("sm_100", V39)) if "R4" in m]
    assert "after the MMA's: Triton 3.9 lowering rule R4" in message


def test_r7_loses_its_partition_0_escape_on_39() -> None:
    """The persistent GEMM's loop with loads, MMA and the accumulator's tmem_load all in
    partition 0 (its optimal plan on 3.6) lowers on 3.6 and fails RemoveTMEMTokens on 3.9."""
    graph = graph_39("gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir")
    plan = plan_of(graph, lambda n: (1,) if n.op_name == "tt.descriptor_load" else (0,))
    assert "R7" not in broken(graph, plan, V36)
    assert {"R7", "D0"} <= broken(graph, plan, V39)
    # Its 3.9 optimum before R7 was widened: the tmem_alloc in partition 2 met 3.6's R7, the
    # MMA and the tmem_load together in partition 1 still failed RemoveTMEMTokens on 3.9.
    plan = plan_of(graph, lambda n: (2,) if n.op_name == "ttng.tmem_alloc" else (1,))
    assert "R7" not in broken(graph, plan, V36)
    assert "R7" in broken(graph, plan, V39)


def test_r10_is_enforced_on_39() -> None:
    """Pair 13 B (gemm_grouped's zero-init tmem_store moved away from the buffer's tmem_load)
    breaks R10 on 3.9, where no single move breaking it lowered (2026-12-02-lowering-moves39);
    3.6 lowered a third of them and does not enforce it. The solver for 3.9 cannot split the
    buffer's load and store; for 3.6 it can."""
    from ortools.sat.python import cp_model

    graph, given, moved = pair_plans(pair_index("R10"))
    assert not broken(graph, given, V39)
    assert "R10" in broken(graph, moved, V39)
    assert "R10" not in broken(graph, moved, V36)
    (buffer,) = lowering_rules(graph, target_for("sm_100", V39)).tmem_accesses
    assert not lowering_rules(graph, target_for("sm_100", V36)).tmem_accesses
    store, load = buffer.accesses  # the zero-init tmem_store, the tmem_load
    for version, status in ((V36, cp_model.OPTIMAL), (V39, cp_model.INFEASIBLE)):
        enc = encode(graph, target_for("sm_100", version))
        model = enc.model.clone()
        model.add(enc.member[store, 0] + enc.member[load, 0] == 1)  # one of them in 0
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(model) == status, version


def test_r13_reduce_outside_partition_0_on_39_sm100() -> None:
    """attention d128 (sm_100): the heuristic's plan with one row reduction moved to another
    partition fails PartitionScheduling on 3.9 (four probes); 3.6 lowered it."""
    graph = graph_39("attention_fwd.d128_m128n128_w8_s2.sm100.ttgir")
    plan, _ = decide(graph, target_for("sm_100", V39))
    assert plan.specialized and not broken(graph, plan, V39)
    reduce = next(n.id for n in graph.ops() if n.op_name == "tt.reduce")
    home = plan.assignment[reduce]
    moved = plan_of(graph, lambda n: (1,) if n.id == reduce else plan.assignment[n.id])
    assert home == (0,) and moved.assignment[reduce] == (1,)
    assert "R13" in broken(graph, moved, V39)
    assert "R13" not in broken(graph, moved, V36)
    sm90 = graphs("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir", TTGIR_39)[0]
    assert not lowering_rules(sm90, target_for("sm_90", V39)).reduces


def test_d0_mma_and_tma_loads_leave_partition_0_on_39_sm100_only() -> None:
    for target, expected in (("sm100", True), ("sm90", False)):
        graph = graph_39(f"gemm_tma.t128x128x64_w4_s4.{target}.ttgir")
        loads_at_0 = plan_of(graph, lambda n: (1,) if n.kind == NodeKind.MMA else (0,))
        assert ("D0" in broken(graph, loads_at_0, V39)) == expected
        assert "D0" not in broken(graph, loads_at_0, V36)


# -- the model and the heuristic on 3.9 ---------------------------------------------------------
FLAT = "gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm100.ttgir"


def test_symmetry_keeps_the_mma_before_its_if() -> None:
    """R4 on 3.9 orders the MMA's partition before the if's: the MMA ranks first in the
    symmetry order, so `fit` renumbers a plan without breaking the order."""
    graph = graph_39(FLAT)
    target = target_for("sm_100", V39)
    enc = encode(graph, target)
    rules = cost_table(graph, target).lowering
    (mma,) = rules.if_mmas
    assert symmetry_order(enc)[0] == mma and first_free_partition(enc.table) == 1
    other = replace(rules.tmem_ifs[0], mma=mma + 1)  # a second MMA: no numbering is free
    two = replace(rules, tmem_ifs=(*rules.tmem_ifs, other))
    assert first_free_partition(SimpleNamespace(lowering=two)) == NO_FREE_PARTITION
    result = solve(graph, target, budget=SolverBudget(TIME_LIMIT))
    assert lowering_violations(graph, result.plan, target) == []
    assert fit(enc, result.plan).assignment == result.plan.assignment


def test_flat_persistent_gemm_on_39() -> None:
    """3.6's plan (if body 0, MMA 1, loads 2) fails on 3.9. The heuristic, numbering the
    MMA's partition after a default region that holds neither MMA nor TMA load, finds none
    (the epilogue if is the only other partition) and says why; the solver's plan follows
    3.9's rules."""
    graph = graph_39(FLAT)
    plan36, _ = decide(graph, SM100)
    assert plan36.specialized and "R4" in broken(graph, plan36, V39)
    target = target_for("sm_100", V39)
    for force in (False, True):
        plan, reason = decide(graph, target, force=force)
        assert not plan.specialized
        assert reason.startswith("not specialized: Triton 3.9 lowering rule R4")
    result = solve(graph, target, hint=plan36, budget=SolverBudget(TIME_LIMIT))
    assert result.plan.specialized and lowering_violations(graph, result.plan, target) == []


@pytest.mark.parametrize(
    "name",
    [
        "attention_fwd.d128_m128n128_w8_s2.sm100.ttgir",
        "attention_fwd.causal_d64_m128n64_w4_s3.sm100.ttgir",
        "gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir",
        "gemm_cond_reset.t128x128x64_g128_w4_s4.sm100.ttgir",
        "attention_bwd.d64_n128m64_w4_s2.sm90.ttgir",
    ],
)
def test_plans_for_39_break_no_39_rule(name: str) -> None:
    """The corpus loops whose 3.6 plans fail on 3.9 (and a 3.6 R3 case): the heuristic (forced
    too) and the solver planning for 3.9 follow 3.9's rules."""
    for graph in graphs(name, TTGIR_39):
        target = target_for(graph.target, V39)
        for force in (False, True):
            plan, reason = decide(graph, target, force=force)
            assert lowering_violations(graph, plan, target) == [], (force, reason)
        result = solve(graph, target, budget=SolverBudget(TIME_LIMIT))
        assert result.plan is not None
        assert lowering_violations(graph, result.plan, target) == [], result.note


def test_sm90_rules_do_not_bind_tmem_or_default_on_39() -> None:
    graph = graph_39("attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")
    rules = lowering_rules(graph, target_for("sm_90", V39))
    assert not rules.not_default and not rules.reduces and not rules.default_only
    assert len(rules.same_partition) == 2  # R2 narrowed is kept
    assert rules == lowering_rules(graph, SM90.for_triton(V39))

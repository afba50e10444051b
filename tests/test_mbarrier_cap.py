"""The mbarrier cap (`encode.constraints.limit_barriers`): each channel stage takes two
mbarriers, a full and an empty one, so a plan has at most max_mbarriers / 2 stages.

A mutation pass found `2 * stages <= max_mbarriers` weakened to `stages <= max_mbarriers`
surviving every test: the solver then finds plans the check (`model.check`) rejects, and the
answer falls back to the heuristic's worse plan. On the corpus's sm_100 attention loop, the
best plan has 5 channel stages; capped at 6 mbarriers (3 stages) the best is a 3-stage plan,
proven optimal; capped at 4 (2 stages), a worse one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.options import SolverBudget
from ws_solver.encode import solve
from ws_solver.model.check import check_plan
from ws_solver.model.dfg import build_graphs
from ws_solver.pipeline.partition import resolve_target

ATTENTION = (
    Path(__file__).resolve().parent.parent
    / "corpus"
    / "ttgir"
    / "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir"
)


@pytest.fixture(scope="module")
def solved():
    """The loop solved under each cap: cap -> (result, target)."""
    module = ir.parse(ATTENTION.read_text())
    graph, target = build_graphs(module)[0], resolve_target(module, None)
    out = {}
    for cap in (4, 6, target.max_mbarriers):
        capped = replace(target, max_mbarriers=cap)
        out[cap] = solve(graph, capped, budget=SolverBudget(20, workers=2)), capped, graph
    return out


def stages(plan) -> int:
    return sum(c.depth for c in plan.channels)


@pytest.mark.parametrize("cap", [4, 6])
def test_the_solver_s_plan_keeps_two_mbarriers_per_stage_under_the_cap(solved, cap) -> None:
    result, target, graph = solved[cap]
    assert "rejected" not in result.note, result.note  # the model let a plan past the cap
    assert result.status == "OPTIMAL", result.note
    assert 2 * stages(result.plan) <= cap
    assert check_plan(result.plan, graph, target) == []


def test_a_cap_of_6_gets_the_best_3_stage_plan(solved) -> None:
    uncapped, _, _ = solved[max(solved)]
    at_6, _, _ = solved[6]
    at_4, _, _ = solved[4]
    assert stages(uncapped.plan) > 3  # the loop's best plan needs more than 6 mbarriers
    assert stages(at_6.plan) == 3  # the cap binds: its best uses all 3 stages it may
    assert uncapped.ii < at_6.ii < at_4.ii  # each cap's optimum, worse as the cap tightens

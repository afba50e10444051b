"""Large loops (issue 36, item 1): any modeled II gets an answer (the objective is exact at any
size); a loop too large for an exact solve gets the heuristic's plan, and says so; building
the exact model stops at the deadline."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.clock import Deadline, OutOfTime
from ws_solver.core.options import SolverBudget
from ws_solver.encode import encode, solve
from ws_solver.model.cost import evaluate
from ws_solver.model.cost_params import PARAMS
from ws_solver.model.dfg import build_graphs
from ws_solver.pipeline.partition import SolveOptions, partition_text, resolve_target
from ws_solver.report.partition import summary_line

solve_mod = importlib.import_module("ws_solver.encode.solve")  # the package exports `solve`
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_fp8.t128x128x128_w4_s4.sm90.ttgir"
YIELD = "      scf.yield %acc_46 : tensor<128x128xf32, #mma> loc(#loc28)\n"
# The least II whose objective (II * ii_weight) no longer fits a double's 53 bits.
INEXACT_II = (1 << 53) // PARAMS.ii_weight


def gemm_with_adds(count: int) -> str:
    """The fp8 GEMM with `count` chained 128x128 additions on its accumulator in the loop."""
    text = GEMM.read_text()
    assert YIELD in text
    adds = ["      %t0 = arith.addf %acc_41, %acc_41 : tensor<128x128xf32, #mma> loc(#loc28)\n"]
    adds += [
        f"      %t{i} = arith.addf %t{i - 1}, %acc_41 : tensor<128x128xf32, #mma> loc(#loc28)\n"
        for i in range(1, count)
    ]
    return text.replace(YIELD, "".join(adds) + YIELD)


def graph_of(text: str):
    module = ir.parse(text)
    return build_graphs(module)[0], resolve_target(module, None)


@pytest.fixture(scope="module")
def huge_ii():
    """A loop of modeled II above INEXACT_II (it was an internal error)."""
    text = gemm_with_adds(1200)
    graph, target = graph_of(text)
    return text, graph, target


@pytest.mark.parametrize("strategy", ["none", "heuristic", "optimal"])
def test_a_modeled_ii_beyond_53_bits_is_planned(huge_ii, strategy, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path))
    text, _, _ = huge_ii
    options = SolveOptions(time_limit=20, workers=1)
    _, reports = partition_text(text, strategy, options=options)
    (report,) = reports
    assert report.ii >= INEXACT_II
    assert (
        report.objective
        == report.ii * PARAMS.ii_weight + evaluate(report.plan, *huge_ii[1:]).tiebreak
    )


def test_the_solver_s_objective_and_bound_stay_exact(huge_ii) -> None:
    _, graph, target = huge_ii
    result = solve(graph, target, budget=SolverBudget(20, workers=1))
    cost = evaluate(result.plan, graph, target)
    assert cost.ii >= INEXACT_II
    assert result.objective == cost.objective
    if result.status == "OPTIMAL":
        assert result.bound == result.objective and result.gap == 0.0
    else:  # unproven: the bound is a proven II times the weight, below the plan's
        assert result.bound <= result.objective


def test_a_loop_too_large_for_an_exact_solve_gets_the_heuristic_s_plan(monkeypatch) -> None:
    graph, target = graph_of(GEMM.read_text())
    monkeypatch.setattr(solve_mod, "EXACT_NODE_LIMIT", len(graph.nodes) - 1)
    result = solve(graph, target, budget=SolverBudget(5, workers=1))
    assert result.status == "FEASIBLE" and result.stopped_by == solve_mod.LOOP_SIZE
    assert "too large for an exact solve" in result.note
    assert result.deterministic_time == 0.0  # no search ran
    assert result.objective == evaluate(result.plan, graph, target).objective


def test_the_summary_says_the_loop_was_too_large(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path))
    graph, _ = graph_of(GEMM.read_text())
    monkeypatch.setattr(solve_mod, "EXACT_NODE_LIMIT", len(graph.nodes) - 1)
    _, reports = partition_text(GEMM.read_text(), "optimal", options=SolveOptions(workers=1))
    line = summary_line("gemm.ttgir", reports[0])
    assert "too large for an exact solve" in line, line


def test_building_the_model_stops_at_the_deadline() -> None:
    graph, target = graph_of(GEMM.read_text())
    with pytest.raises(OutOfTime):
        encode(graph, target, deadline=Deadline.after(-1.0))
    result = solve(graph, target, budget=SolverBudget(5, workers=1, deadline=Deadline.after(-1.0)))
    assert result.stopped_by == "wall clock" and result.deterministic_time == 0.0
    assert result.status == "FEASIBLE"
    assert "not built by the deadline" in result.note

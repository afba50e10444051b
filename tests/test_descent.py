"""The partition descent (`encode/descent.py`): its neighbourhoods, and a descent that lowers
a poor plan's II to a valid plan the cost model agrees with, the same way each time."""

from __future__ import annotations

from pathlib import Path

from ortools.sat.python import cp_model

from ws_solver import ir
from ws_solver.core.options import SolverBudget
from ws_solver.encode import encode
from ws_solver.encode.decode import decode
from ws_solver.encode.descent import descend, neighbourhoods
from ws_solver.encode.solve import add_hint, solver_parameters
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate
from ws_solver.model.dfg import build_graphs
from ws_solver.model.target import SM100
from ws_solver.model.unspecialized import single_partition_plan

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
LOOP = TTGIR / "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir"


def test_neighbourhoods_free_pairs_triples_and_splits() -> None:
    assert neighbourhoods([0], [1, 2]) == [(0, 1)]
    found = neighbourhoods([0, 1, 2], [3, 4])
    assert found[:3] == [(0, 1), (0, 2), (1, 2)] and found[3] == (0, 1, 2)
    assert found[4:] == [(0, 3), (1, 3), (2, 3), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert neighbourhoods([0, 1], []) == [(0, 1)]


def _plain(solver: cp_model.CpSolver, budget: SolverBudget) -> None:
    solver_parameters(solver, budget, ("default_lp",))


def _descend_from_one_partition():
    graph = build_graphs(ir.parse(LOOP.read_text()))[0]
    enc = encode(graph, SM100)
    single = single_partition_plan(graph, SM100)
    assert add_hint(enc, single)
    start = cp_model.CpSolver()
    start.parameters.fix_variables_to_their_hinted_value = True
    assert start.solve(enc.model) == cp_model.OPTIMAL
    best, spent = descend(enc, start, SolverBudget(5.0, workers=1), _plain)
    return graph, enc, start, best, spent


def test_the_descent_lowers_a_poor_plan_to_a_valid_one() -> None:
    graph, enc, start, best, spent = _descend_from_one_partition()
    assert best is not None and 0 < spent <= 5.0 + 0.5
    plan = decode(enc, best.value)
    assert plan.specialized and not check_plan(plan, graph, SM100)
    assert evaluate(plan, graph, SM100).ii == best.value(enc.ii) < start.value(enc.ii)
    again = _descend_from_one_partition()[3]
    assert again.value(enc.ii) == best.value(enc.ii)


def test_least_ii_descends_only_far_from_its_bound_on_sm100(monkeypatch) -> None:
    """Cut short (0.1 deterministic s to minimize), the search on an sm_100 loop ends far
    above its bound and the descent runs before the refutation, which still proves the least
    II; a search that proves its II at once never descends, nor does an sm_90 model."""
    import importlib

    from ws_solver.encode.solve import least_ii, proof_encoding
    from ws_solver.model.target import SM90

    solve_module = importlib.import_module("ws_solver.encode.solve")
    calls = []

    def recorded(enc, start, budget, configure):
        calls.append(enc.target.name)
        return descend(enc, start, budget, configure)

    monkeypatch.setattr(solve_module, "descend", recorded)
    graph = build_graphs(ir.parse(LOOP.read_text()))[0]
    full = SolverBudget(20.0, workers=1)
    least = solve_module.solve(graph, SM100, budget=full).ii
    assert calls == []  # proven by the optimizing search: no descent
    monkeypatch.setattr(solve_module, "OPTIMIZE_SHARE", 0.005)
    enc = encode(graph, SM100)
    add_hint(enc, single_partition_plan(graph, SM100))
    found = least_ii(enc, full, lambda: proof_encoding(enc))
    assert calls == [SM100.name]
    assert found.status == "OPTIMAL" and int(found.best.value(enc.ii)) == least
    # sm_90 models prove their loops with the LP first; the descent was not measured there.
    assert solve_module._descends(SM100) and not solve_module._descends(SM90)

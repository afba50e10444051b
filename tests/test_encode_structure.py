"""The CP-SAT model's structure for large loops: linear symmetry breaking (in either node
order), nodes that must share a partition collapsed onto one set of literals, the II floor,
the refutation that proves the least II, and the subsolvers per target. None of them may
change the optimum."""

from __future__ import annotations

import dataclasses
import importlib
from functools import cache
from pathlib import Path

import pytest
from ortools.sat.python import cp_model

from ws_solver import ir
from ws_solver.core.options import SolverBudget
from ws_solver.encode import EncodeOptions, encode, solve
from ws_solver.encode.constraints import shared_groups, symmetry_order
from ws_solver.encode.decode import fit
from ws_solver.encode.objective import ii_floor, ii_lower_bound
from ws_solver.encode.solve import (
    add_hint,
    fixed_plan_objective,
    least_ii,
    proof_encoding,
    refute_ii,
    subsolvers_for,
)
from ws_solver.heuristic import partition
from ws_solver.model.cost import cost_table, evaluate
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.target import SM90, SM100, target_for
from ws_solver.model.unspecialized import single_partition_plan

solve_module = importlib.import_module("ws_solver.encode.solve")  # `encode.solve` is the function
TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
LOOPS = [
    "attention_fwd.d64_m128n64_w4_s3.sm90.ttgir",
    "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir",
    "gemm_persistent.t128x256x64_relu_w8_s3.sm90.ttgir",
    "gemm_tma.t128x128x64_w4_s4.sm100.ttgir",
]


@cache
def graph(name: str) -> LoopGraph:
    return build_graphs(ir.parse((TTGIR / name).read_text()))[0]


def _objective(name: str, options: EncodeOptions) -> tuple[str, int | None]:
    g = graph(name)
    result = solve(g, target_for(g.target), options=options, budget=SolverBudget(20.0, workers=1))
    return result.status, result.objective


@pytest.mark.parametrize("name", LOOPS)
def test_neither_symmetry_breaking_nor_collapsing_changes_the_optimum(name: str) -> None:
    plain = _objective(name, EncodeOptions(symmetry_breaking=False, collapse=False))
    assert plain[0] == "OPTIMAL"
    assert _objective(name, EncodeOptions()) == plain
    assert _objective(name, EncodeOptions(symmetry_order="heaviest")) == plain


def test_heaviest_order_ranks_partitions_by_their_heaviest_node() -> None:
    """The heaviest node comes first, so it runs in partition 0 or 1; a hint renumbered
    by `fit` for that order is a solution of the model with the same objective."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    enc = encode(g, SM100, EncodeOptions(symmetry_order="heaviest"))
    order = symmetry_order(enc)
    least = [min(enc.table.nodes[n].busy.values(), default=0) for n in order]
    assert sorted(order) == sorted(enc.table.assignable) and least == sorted(least, reverse=True)
    assert order != symmetry_order(encode(g, SM100))
    hint = partition(g, SM100)
    fitted = fit(enc, hint)
    assert all(p in (0, 1) for p in fitted.assignment[order[0]])
    assert fixed_plan_objective(enc, fitted) == evaluate(fitted, g, SM100).objective
    with pytest.raises(ValueError, match="symmetry order"):
        encode(g, SM100, EncodeOptions(symmetry_order="random"))


@pytest.mark.parametrize("name", LOOPS)
def test_ii_floor_counts_the_occupancy_a_split_gives_up(name: str) -> None:
    """II's lower bound: a specialized plan's floor plus the lost occupancy, unless the
    one-partition plan is below that; never above the optimum."""
    g = graph(name)
    target = target_for(g.target)
    enc = encode(g, target)
    single = evaluate(single_partition_plan(g, target), g, target).ii
    lost = enc.table.params.lost_occupancy_cycles if enc.table.single_ctas > 1 else 0
    assert ii_floor(enc) == min(single, ii_lower_bound(enc) + lost)
    assert enc.ii.proto.domain[0] == ii_floor(enc)
    assert ii_floor(enc) <= solve(g, target, budget=SolverBudget(20.0, workers=1)).ii


def test_refuting_below_the_least_ii_proves_it() -> None:
    """No plan has an II below the optimum's; one has it (the question is feasibility)."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    least = solve(g, SM100, budget=SolverBudget(20.0, workers=1)).ii
    below, _ = refute_ii(proof_encoding(encode(g, SM100)), least, SolverBudget(20.0, workers=1))
    assert below == cp_model.INFEASIBLE
    at, solver = refute_ii(
        proof_encoding(encode(g, SM100)), least + 1, SolverBudget(20.0, workers=1)
    )
    assert at == cp_model.OPTIMAL and solver.value(encode(g, SM100).ii) == least


def test_least_ii_refutes_when_the_optimizing_search_stops_short(monkeypatch) -> None:
    """Given almost no time to minimize, the first phase still proves the least II: the
    refutation (on one proof model, built once) finds better plans, each minimized from,
    until one refutes."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    least = solve(g, SM100, budget=SolverBudget(20.0, workers=1)).ii
    monkeypatch.setattr(solve_module, "OPTIMIZE_SHARE", 0.01)  # 0.2 s: the hint, no proof
    enc = encode(g, SM100)
    add_hint(enc, partition(g, SM100))
    built = []

    def prover():
        built.append(proof_encoding(enc))
        return built[-1]

    found = least_ii(enc, SolverBudget(20.0, workers=1), prover)
    assert found.status == "OPTIMAL" and found.bound == least
    assert int(found.best.value(enc.ii)) == least and len(built) == 1


def test_symmetry_breaking_grows_linearly_with_the_loop() -> None:
    """At most three clauses of three literals and one implication per node and partition
    (ordering every node against all the earlier ones would be quadratic)."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    enc = encode(g, SM100)
    literals = 0
    for c in enc.groups["symmetry"]:
        proto = c.proto
        literals += len(proto.bool_or.literals) + len(proto.bool_and.literals)
        literals += len(proto.enforcement_literal)
    assert 0 < literals <= 8 * len(enc.table.assignable) * enc.partitions


def test_nodes_that_share_a_partition_share_their_literals() -> None:
    """On sm_90 the wgmmas and the register tensors they make or take stay in one partition
    (lowering rules R2 and R9): one set of literals serves them all."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm90.ttgir")
    table = cost_table(g, SM90)
    lead = shared_groups(table)
    wgmmas = table.lowering.same_partition
    assert len(wgmmas) == 2 and len({lead.get(n, n) for n in wgmmas}) == 1
    enc = encode(g, SM90)
    for n, head in lead.items():
        assert head < n and head not in lead
        assert all(enc.x[n, p] is enc.x[head, p] for p in range(enc.partitions))
    alone = encode(g, SM90, EncodeOptions(collapse=False))
    assert len(enc.model.proto.variables) < len(alone.model.proto.variables)
    # Duplicable nodes keep their own literals: they may run in several partitions.
    assert not set(lead) & table.duplicable


def test_the_lp_runs_first_where_accumulators_live_in_registers() -> None:
    registers = dataclasses.replace(SM100, mma_accumulator_in_registers=True)
    for target in (SM90, registers):
        assert subsolvers_for(target)[0] == "max_lp" == subsolvers_for(target, refuting=True)[0]
    assert subsolvers_for(SM100)[-1] == "max_lp"
    assert "max_lp" not in subsolvers_for(SM100, refuting=True)


def test_one_place_sets_cp_sat_parameters() -> None:
    from ortools.sat.python import cp_model

    from ws_solver.core.clock import Deadline
    from ws_solver.encode.solve import SUBSOLVERS, solver_parameters

    searching = cp_model.CpSolver()
    budget = SolverBudget(3.0, workers=2, seed=5, deadline=Deadline.after(1.0))
    solver_parameters(searching, budget)
    params = searching.parameters
    assert (params.num_workers, params.random_seed, params.max_deterministic_time) == (2, 5, 3.0)
    assert params.interleave_search and list(params.subsolvers) == list(SUBSOLVERS)
    assert 0 < params.max_time_in_seconds <= 1.0  # the budget's deadline, not 10 x 3 + 10
    assert not params.catch_sigint_signal
    plain = cp_model.CpSolver()
    solver_parameters(plain, budget.limited(0.5), subsolvers=None)
    assert plain.parameters.max_deterministic_time == 0.5 and not plain.parameters.interleave_search
    assert not plain.parameters.subsolvers
    fixed = cp_model.CpSolver()
    solver_parameters(fixed, None)
    assert fixed.parameters.num_workers == 1 and not fixed.parameters.catch_sigint_signal


def test_least_ii_proven_apart_from_the_tie_break() -> None:
    """`ii_proven` never claims a least II that a longer search beats, and a proven optimum
    has it; a search cut short may prove its II without finishing the tie-break."""
    g = graph("attention_bwd.d128_n128m64_w8_s2.sm100.ttgir")
    target = target_for(g.target)
    hint = partition(g, target)
    done = solve(g, target, hint=hint, budget=SolverBudget(20.0, workers=1))
    assert done.status == "OPTIMAL" and done.ii_proven
    for limit in (0.01, 0.1, 0.5):
        cut = solve(g, target, hint=hint, budget=SolverBudget(limit, workers=1))
        if cut.ii_proven:
            assert cut.ii == done.ii, limit
        if cut.ii != done.ii:
            assert not cut.ii_proven, limit

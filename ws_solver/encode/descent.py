"""`descend`: lower a solution's II by solving again a few of its partitions at a time.

A neighbourhood of a solution frees the nodes of two or three of its partitions (or of one
or two and an unused one: a split) to move among those partitions; every other partition
keeps exactly its nodes, while warps, registers, channels and depths stay free. A
partition's busy time is a term of the II, so these are the moves that can lower it, where
CP-SAT's own LNS draws random neighbourhoods. `solve` runs it where its search ends far from
its bound (`least_ii`): on the scale families no run got worse and 13 of 100 better
(benchmarks/results/2026-12-06-partition-descent). What held the 155-op attention loop 8-23%
above its best known plan was sm_100's mbarrier cap, not the search
(benchmarks/results/2026-12-06-mbarrier-cap).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from ortools.sat.python import cp_model

from ..core.interrupts import interruptible
from ..core.options import SolverBudget
from .variables import Encoding

# The most deterministic seconds one neighbourhood may take: on small loops one is settled
# (a better plan or none) in hundredths; on the 155-op loop many run this long and are cut
# off, and the next is tried.
STEP_LIMIT = 0.5

Configure = Callable[[cp_model.CpSolver, SolverBudget], None]


def neighbourhoods(used: list[int], unused: list[int]) -> list[tuple[int, ...]]:
    """The partition sets a step frees: pairs, then triples of used partitions, then one or
    two used ones with the first unused one (a split)."""
    pairs = list(combinations(used, 2))
    splits = [(*part, unused[0]) for part in [*combinations(used, 1), *pairs]] if unused else []
    return [*pairs, *combinations(used, 3), *splits]


def descend(
    enc: Encoding, start: cp_model.CpSolver, budget: SolverBudget, configure: Configure
) -> tuple[cp_model.CpSolver | None, float]:
    """First-improvement descent from `start`'s solution of `enc.model` until no
    neighbourhood has a lower II or `budget` is spent: the solver holding the best solution
    found (None when none beats `start`) and the deterministic seconds spent. A neighbourhood
    is `enc.model` with more constraints, so its solution is one of `enc.model`."""
    spent, best, current = 0.0, None, start
    least = int(start.value(enc.ii))
    improved = True
    while improved:
        improved = False
        used = [p for p in range(enc.partitions) if current.value(enc.used[p])]
        unused = [p for p in range(enc.partitions) if p not in used]
        for free in neighbourhoods(used, unused):
            rest = budget.time_limit - spent
            if rest <= 0 or budget.deadline.left() <= 0:
                return best, spent
            step = budget.limited(min(STEP_LIMIT, rest))
            solver, status = _lower(enc, current, set(free), least, step, configure)
            spent += solver.deterministic_time
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                current = best = solver
                least, improved = int(solver.value(enc.ii)), True
                break
    return best, spent


def hint_solution(model: cp_model.CpModel, solver: cp_model.CpSolver) -> None:
    """Hint every variable of `model` with `solver`'s solution (of a model with the same
    variables: `model` itself, or a clone with more constraints)."""
    model.clear_hints()
    for index, value in enumerate(solver.response_proto.solution):
        model.add_hint(model.get_int_var_from_proto_index(index), value)


def _lower(
    enc: Encoding,
    current: cp_model.CpSolver,
    free: set[int],
    least: int,
    budget: SolverBudget,
    configure: Configure,
) -> tuple[cp_model.CpSolver, cp_model.CpSolverStatus]:
    """CP-SAT on `enc.model` with the partitions outside `free` fixed to `current`'s nodes
    and II below `least`, hinted with `current`'s solution."""
    model = enc.model.clone()
    hint_solution(model, current)
    for (_, p), x in enc.x.items():
        if p not in free:
            model.add(model.get_int_var_from_proto_index(x.index) == current.value(x))
    ii = model.get_int_var_from_proto_index(enc.ii.index)
    model.add(ii < least)
    model.minimize(ii)
    solver = cp_model.CpSolver()
    configure(solver, budget)
    return solver, interruptible(lambda: solver.solve(model), solver.stop_search)

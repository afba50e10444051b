"""`solve`: run CP-SAT on one loop, warm-started from a hint, and return the best Plan.

Guarantees: the plan returned passes `check_plan` whenever any valid plan is known, is never
worse (under `evaluate`) than a valid hint, and is the same for the same inputs (fixed seed,
fixed workers, interleaved search, deterministic time limit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from time import perf_counter

from ortools.sat.python import cp_model

from ..core.clock import OutOfTime
from ..core.interrupts import interruptible
from ..core.options import DEFAULT_BUDGET, SolverBudget
from ..core.strategy import Strategy
from ..heuristic import partition as heuristic_partition
from ..model.check import check_plan
from ..model.cost import Cost, evaluate
from ..model.floors import no_split, overflows
from ..model.graph import LoopGraph
from ..model.plan import Plan
from ..model.target import Target
from ..model.unspecialized import single_partition_plan
from .build import encode
from .decode import decode, fit, plan_values
from .descent import descend, hint_solution
from .variables import LIMIT_GROUPS, EncodeOptions, Encoding

# CP-SAT's full-problem subsolvers, which take turns with its LNS workers (more than one
# worker: core/options.DEFAULT_WORKERS). Optimizing on sm_100 models: the two LP-free CP
# searches, then the LP with cuts (`max_lp`), which bounds a partition's busy time; `core`
# is left to the refutation, which proves the bounds. Chosen by measurement over 9
# portfolios on the scale families' 16 sm_100 loops x 5 seeds at 10 deterministic s
# (benchmarks/results/2026-12-04-solver-portfolio): within 5% of the best known on 74 of 80
# runs (with `core` first: 69; one worker: 67), and the least II proven on 50 of the 55 up
# to 100 ops, as with `core`. Where the MMA keeps its accumulator in registers (sm_90), the
# wgmmas and the register tensors they make or take share one partition (`shared_groups`),
# and the LP, scheduled first, proves loops of 900-3,000 ops the others leave at a 2-3% gap
# (benchmarks/results/2026-12-01-scale).
SUBSOLVERS = ("no_lp", "quick_restart_no_lp", "max_lp")
REGISTER_ACCUMULATOR_SUBSOLVERS = ("max_lp", "core", "no_lp", "quick_restart_no_lp")
# Refuting "II < best" (`refute_ii`) on sm_100 models the LP only costs time: 2.1 vs 0.85
# deterministic s on the 62-op attention loop of the corpus tile.
REFUTATION_SUBSOLVERS = ("core", "no_lp", "quick_restart_no_lp")
# Share of the deterministic time limit the first phase (least II) may use, and the share
# of that its optimizing search gets before the refutation (`least_ii`).
FIRST_PHASE_SHARE = 0.9
OPTIMIZE_SHARE = 0.8
# When the optimizing search ends with its best II more than FAR_GAP above its bound, the
# refutation ("II < best") has no chance in the time left: on sm_100 models the partition
# descent (`descent.py`) gets that time instead, and the refutation what the descent leaves.
# Measured on the scale families (benchmarks/results/2026-12-06-partition-descent).
FAR_GAP = 0.1
DESCENT_SUBSOLVERS = ("default_lp",)
# Loops of more nodes get the heuristic's plan, reported as too large for an exact solve
# (`stopped_by` LOOP_SIZE): building the model takes about 1-3.5 ms a node (3,000 scalar ops:
# 3.5 s alone, 10.7 s on 2 cores shared four ways), and its slowest step a fifth of that, so
# past this size the model alone outlasts a 10 s limit. The scale benchmark's largest loop
# that reaches the search has 3,214 nodes.
EXACT_NODE_LIMIT = 5000
LOOP_SIZE = "loop size"


@dataclass
class SolveResult:
    """The plan for one loop, how good it is proven to be, and how it was found."""

    plan: Plan
    status: str  # "OPTIMAL", "FEASIBLE", "INFEASIBLE" or "UNKNOWN"
    objective: int | None  # the model's objective of `plan` (== evaluate(plan).objective)
    bound: int | None  # best proven lower bound on the objective
    gap: float | None  # (objective - bound) / objective; 0 when optimal
    wall_s: float
    hint_objective: int | None  # evaluate(hint).objective, when the hint is a valid plan
    ii: int | None
    infeasible_groups: list[str] = field(default_factory=list)
    note: str = ""
    hint_ii: int | None = None
    deterministic_time: float = 0.0  # CP-SAT's deterministic time, both phases
    stopped_by: str = ""  # the limit that ended an unproven search (`Search.stopped_by`)
    # When CP-SAT reported its first solution: wall seconds since `solve` began (encoding
    # included) and CP-SAT's deterministic time; None when it found none.
    first_solution_s: float | None = None
    first_solution_deterministic: float | None = None
    # The least II is proven though the tie-break at that II may not be (status "FEASIBLE").
    ii_proven: bool = False

    def __post_init__(self) -> None:
        self.ii_proven = self.ii_proven or self.status == "OPTIMAL"  # floors, fixed answers


def default_hint(graph: LoopGraph, target: Target) -> tuple[Plan, str]:
    """The heuristic's plan, else (should it fail) one partition."""
    try:
        return heuristic_partition(graph, target), ""
    except Exception as exc:  # the heuristic must never stop the solver
        reason = f"heuristic failed ({type(exc).__name__}: {exc})"
    hint = single_partition_plan(graph, target, Strategy.NONE)
    return hint, f"{reason}; hint: one partition"


def solver_parameters(
    solver: cp_model.CpSolver,
    budget: SolverBudget | None,
    subsolvers: tuple[str, ...] | None = SUBSOLVERS,
) -> None:
    """The one place CP-SAT's parameters are set. With `subsolvers`, a reproducible search:
    fixed seed and workers, interleaved (deterministic) subsolvers. With a `budget`, its
    deterministic time limit and a wall-clock limit at its deadline, else a generous one only
    as a safety net; without (a check of one fixed plan), one worker and no limit."""
    params = solver.parameters
    # CP-SAT would take Ctrl-C as "stop searching" (a cut-short solve, reported as if it were
    # the result) and leave SIGINT's default action behind it; Python's handler must see it.
    params.catch_sigint_signal = False
    params.num_workers = 1 if budget is None else max(1, budget.workers)
    if budget is None:
        return
    params.max_deterministic_time = budget.time_limit
    params.max_time_in_seconds = wall_limit(budget)
    if subsolvers is not None:
        params.random_seed = budget.seed
        params.interleave_search = True
        params.interleave_batch_size = 1
        params.subsolvers.extend(subsolvers)


def run_solver(solver: cp_model.CpSolver, model: cp_model.CpModel, callback=None):
    """`solver.solve(model, callback)`, stopped (`stop_search`) by a Ctrl-C, which is then
    raised: CP-SAT holds the main thread in native code, where Python's handler cannot run
    (`core.interrupts.interruptible`). A cut-short search never passes for a result."""
    return interruptible(lambda: solver.solve(model, callback), solver.stop_search)


def subsolvers_for(target: Target, refuting: bool = False) -> tuple[str, ...]:
    """CP-SAT's full-problem subsolvers for models of `target`, to optimize or to refute
    (see SUBSOLVERS)."""
    if target.mma_accumulator_in_registers:
        return REGISTER_ACCUMULATOR_SUBSOLVERS
    return REFUTATION_SUBSOLVERS if refuting else SUBSOLVERS


def wall_limit(budget: SolverBudget) -> float:
    """CP-SAT's wall-clock limit: what is left until the budget's deadline, and without one a
    safety net well above its deterministic time limit."""
    return max(0.0, min(10 * budget.time_limit + 10, budget.deadline.left()))


def add_hint(enc: Encoding, plan: Plan) -> bool:
    """Hint the decision variables with `plan`; False when it does not fit the model."""
    values = plan_values(enc, fit(enc, plan))
    hinted = set()
    for var, value in values or ():
        if var.index not in hinted:  # nodes that share a partition share their literals
            hinted.add(var.index)
            enc.model.add_hint(var, value)
    return values is not None


def fixed_plan_objective(enc: Encoding, plan: Plan) -> int | None:
    """The model's objective with the decision variables fixed to `plan` (None when that is
    not a solution of the model): what `evaluate` must agree with."""
    values = plan_values(enc, fit(enc, plan))
    if values is None:
        return None
    model = enc.model.clone()
    for var, value in values:
        model.add(model.get_int_var_from_proto_index(var.index) == value)
    solver = cp_model.CpSolver()
    solver_parameters(solver, None)
    status = run_solver(solver, model)
    return int(solver.value(enc.objective)) if status == cp_model.OPTIMAL else None


@dataclass
class Search:
    """What the two-phase search found: a solution reader, its objective and a bound."""

    status: str
    value: Callable | None  # reads a variable or expression of the final solution
    objective: int | None
    bound: int | None
    deterministic_time: float
    first_solution: tuple[float, float] | None = None  # (wall s, deterministic s)
    stopped_by: str = ""  # "deterministic limit", "wall clock", or "" (it ended by itself)


class _FirstSolution(cp_model.CpSolverSolutionCallback):
    """Records the wall and deterministic time of the first solution CP-SAT reports."""

    def __init__(self) -> None:
        super().__init__()
        self.at: tuple[float, float] | None = None

    def on_solution_callback(self) -> None:
        if self.at is None:
            self.at = (self.wall_time, self.deterministic_time)


def _stopped_by(solver: cp_model.CpSolver, status, time_limit: float) -> str:
    """Which limit ended a run that neither proved nor refuted (see `Search.stopped_by`)."""
    if status in (cp_model.OPTIMAL, cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        return ""
    return "wall clock" if solver.deterministic_time < 0.99 * time_limit else "deterministic limit"


def search(
    enc: Encoding, budget: SolverBudget, prover: Callable[[], Encoding] | None = None
) -> Search:
    """Lexicographic search, as the objective is: first the least II (`least_ii`), then the
    least objective (the tie-break) among plans with that II, hinted with the first phase's
    plan. Two small objectives prove faster than one that spans 2**53. Both phases share
    `budget`'s deterministic time and stop at its deadline. `prover` builds the model the
    first phase refutes on (by default `proof_encoding(enc)`; it must not admit plans `enc`
    excludes)."""
    model, weight = enc.model, enc.table.params.ii_weight
    time_limit, deadline = budget.time_limit, budget.deadline
    prover = prover or (lambda: proof_encoding(enc))
    first = least_ii(enc, budget.limited(FIRST_PHASE_SHARE * time_limit), prover)
    spent, best = first.deterministic_time, first.best
    if best is None:
        model.minimize(enc.objective)
        # Out of time before a plan: the bound on II still bounds the objective (the caller
        # falls back to the hint, and its gap is then against this bound).
        bound = first.bound * weight if first.status == "UNKNOWN" else None
        return Search(
            first.status, None, None, bound, spent, first.first_solution, first.stopped_by
        )
    lower = first.bound * weight
    hint_solution(enc.model, best)
    # II between the proven bound and the best found (equal once proven): the second phase
    # does not prove the first phase's bound again.
    least, most = first.bound, int(best.value(enc.ii))
    model.add(enc.ii >= least)
    model.add(enc.ii <= most)
    # It minimizes the objective less `lower`: CP-SAT reports objectives as doubles, exact
    # below 2**53, so at any II the bound read back once II is proven (the tie-break, 36 bits)
    # stays exact.
    excess = model.new_int_var(0, most - least, "ii_excess")
    model.add(excess == enc.ii - least)
    model.minimize(enc.objective + (excess - enc.ii) * weight)
    second = cp_model.CpSolver()
    rest = max(time_limit - spent, (1 - FIRST_PHASE_SHARE) * time_limit)
    solver_parameters(second, budget.limited(rest), subsolvers_for(enc.target))
    if deadline.left() > 0:
        status = run_solver(second, model)
        spent += second.deterministic_time
        stopped = first.stopped_by or _stopped_by(second, status, rest)
    else:  # CP-SAT would still load (and presolve) the model: 0.3 s at 2,700 ops
        status, stopped = cp_model.UNKNOWN, first.stopped_by or "wall clock"
    ii_proven = first.status == "OPTIMAL"
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        objective = int(best.value(enc.objective))
        at = first.first_solution
        return Search("FEASIBLE", best.value, objective, lower, spent, at, stopped)
    objective = int(second.value(enc.objective))
    # With the least II proven, plans of higher II cost more than any of that II, so the
    # second phase's bound holds for the whole model.
    bound = lower + int(second.best_objective_bound) if ii_proven else lower
    optimal = ii_proven and status == cp_model.OPTIMAL
    status_name = "OPTIMAL" if optimal else "FEASIBLE"
    return Search(status_name, second.value, objective, bound, spent, first.first_solution, stopped)


@dataclass
class LeastII:
    """The first phase's answer: its status ("OPTIMAL" once the least II is proven), the
    solver holding its best plan (None when it found none), the proven bound on II."""

    status: str
    best: cp_model.CpSolver | None
    bound: int
    deterministic_time: float
    first_solution: tuple[float, float] | None
    stopped_by: str


def least_ii(enc: Encoding, budget: SolverBudget, prover: Callable[[], Encoding]) -> LeastII:
    """The least II: minimized for OPTIMIZE_SHARE of the budget's time, hinted; then, while it
    is not proven, "II < best" refuted as a plain feasibility question on `prover()`'s model
    in the rest. A plan the refutation finds is minimized from again (OPTIMIZE_SHARE of what
    is left), then refuted."""
    time_limit, deadline = budget.time_limit, budget.deadline
    limit = OPTIMIZE_SHARE * time_limit
    best, status, first = _minimize_ii(enc, budget.limited(limit))
    spent, stopped = best.deterministic_time, _stopped_by(best, status, limit)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return LeastII(best.status_name(status), None, _bound(best), spent, first, stopped)
    bound, proof, proven = int(best.best_objective_bound), None, status == cp_model.OPTIMAL
    least = int(best.value(enc.ii))
    if not proven and least - bound > FAR_GAP * least and _descends(enc.target):
        lower, used = descend(enc, best, budget.limited(time_limit - spent), _descent_parameters)
        best, spent = lower or best, spent + used
    while not proven and spent < time_limit:
        if deadline.left() <= (0 if proof else enc.built_s):
            stopped = "wall clock"  # no time to build the proof model (as long as `enc` took)
            break
        proof, rest = proof or prover(), time_limit - spent
        least = int(best.value(enc.ii))
        answer, refuter = refute_ii(proof, least, budget.limited(rest))
        spent += refuter.deterministic_time
        if answer == cp_model.INFEASIBLE:
            proven, bound = True, least
            break
        if answer != cp_model.OPTIMAL:  # a feasibility question: OPTIMAL = a plan found
            stopped = _stopped_by(refuter, answer, rest)
            break
        enc.model.clear_hints()
        add_hint(enc, decode(proof, refuter.value))
        limit = OPTIMIZE_SHARE * (time_limit - spent)
        again, status, _ = _minimize_ii(enc, budget.limited(limit))
        spent += again.deterministic_time
        stopped = _stopped_by(again, status, limit)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE) or again.value(enc.ii) >= least:
            break  # the refutation's plan did not take as a hint
        best, bound = again, max(bound, int(again.best_objective_bound))
        proven = status == cp_model.OPTIMAL
    name = "OPTIMAL" if proven else "FEASIBLE"
    return LeastII(name, best, bound, spent, first, "" if proven else stopped)


def _descends(target: Target) -> bool:
    """Whether a search far from its bound goes on with the partition descent: on models
    whose MMAs accumulate in tensor memory (sm_100), where it was measured."""
    return not target.mma_accumulator_in_registers


def _descent_parameters(solver: cp_model.CpSolver, budget: SolverBudget) -> None:
    """One neighbourhood of the descent: a small model, one worker, CP-SAT's default search."""
    solver_parameters(solver, replace(budget, workers=1), DESCENT_SUBSOLVERS)


def _bound(solver: cp_model.CpSolver) -> int:
    """The least II `solver` proved before it stopped without a plan (0 if it proved none)."""
    bound = solver.best_objective_bound
    return max(0, math.ceil(bound)) if math.isfinite(bound) else 0


def _minimize_ii(enc: Encoding, budget: SolverBudget):
    """CP-SAT minimizing II on `enc` (with its hints): the solver, its status, and when it
    reported its first plan (`_FirstSolution`)."""
    solver = cp_model.CpSolver()
    solver_parameters(solver, budget, subsolvers_for(enc.target))
    enc.model.minimize(enc.ii)
    first = _FirstSolution()
    status = run_solver(solver, enc.model, first)
    return solver, status, first.at


def refute_ii(enc: Encoding, least: int, budget: SolverBudget):
    """CP-SAT on "a plan of `enc` with II < `least`" (the constraint stays: a later question
    asks for less): INFEASIBLE proves `least` the least II. Its status and the solver."""
    enc.model.clear_objective()
    enc.model.clear_hints()
    enc.model.add(enc.ii < least)
    solver = cp_model.CpSolver()
    solver_parameters(solver, budget, subsolvers_for(enc.target, refuting=True))
    return run_solver(solver, enc.model), solver


def proof_encoding(enc: Encoding) -> Encoding:
    """The model `least_ii` refutes on: `enc`'s, its interchangeable partitions ranked by
    their heaviest node (`symmetry_order`), which prunes a refutation several times faster
    than program order, while program order finds plans sooner."""
    return encode(enc.graph, enc.target, replace(enc.options, symmetry_order="heaviest"))


def valid_cost(plan: Plan, graph: LoopGraph, target: Target) -> Cost | None:
    return None if check_plan(plan, graph, target) else evaluate(plan, graph, target)


def solve(
    graph: LoopGraph,
    target: Target,
    hint: Plan | None = None,
    budget: SolverBudget = DEFAULT_BUDGET,
    options: EncodeOptions | None = None,
) -> SolveResult:
    """The best plan CP-SAT finds within the budget's deterministic seconds, and by its
    deadline when it has one (the wall clock may then stop it first: `stopped_by`)."""
    start = perf_counter()
    quick = quick_answer(graph, target, hint)
    if quick is not None:
        quick.wall_s = perf_counter() - start
        return quick
    notes = []
    if hint is None:
        hint, why = default_hint(graph, target)
        notes += [why] if why else []
    hint_cost = valid_cost(hint, graph, target)
    if hint_cost is None:
        notes.append("hint is not a valid plan")
    if len(graph.nodes) > EXACT_NODE_LIMIT:
        why = f"too large for an exact solve ({len(graph.nodes)} nodes, {EXACT_NODE_LIMIT} at most)"
        return _hint_answer(hint, hint_cost, [*notes, why], LOOP_SIZE, start)
    try:
        enc = encode(graph, target, options, budget.deadline)
    except OutOfTime:
        why = "the exact model was not built by the deadline"
        return _hint_answer(hint, hint_cost, [*notes, why], "wall clock", start)
    if not add_hint(enc, hint):
        notes.append("the hint does not fit the model's variables")

    searching = perf_counter()
    found = search(enc, budget)
    result = SolveResult(
        plan=hint,
        status=found.status,
        objective=None,
        bound=found.bound,
        gap=None,
        wall_s=0.0,
        hint_objective=hint_cost.objective if hint_cost else None,
        ii=None,
        hint_ii=hint_cost.ii if hint_cost else None,
        deterministic_time=found.deterministic_time,
        stopped_by=found.stopped_by,
    )
    if found.first_solution is not None:
        wall, deterministic = found.first_solution
        result.first_solution_s = searching - start + wall
        result.first_solution_deterministic = deterministic
    if found.value is not None:
        _take_solution(result, enc, found, hint_cost, notes)
    if result.objective is None:  # no usable plan from the solver
        if found.status == "INFEASIBLE":
            groups = infeasible_groups(graph, target, options, budget)
            result.infeasible_groups = groups
        elif hint_cost is not None:
            _take_hint(result, hint_cost)
            notes.append(f"solver status {found.status}, no better plan: returning the hint")
        else:
            result.status = "UNKNOWN"
    # The bound is II x weight + the tie-break's: at least the plan's II x weight only
    # once the first phase has proven that II least.
    weight = enc.table.params.ii_weight
    result.ii_proven = result.status == "OPTIMAL" or (
        result.ii is not None and result.bound is not None and result.bound >= result.ii * weight
    )  # status may have changed since construction (the hint taken, UNKNOWN)
    result.note = "; ".join(n for n in notes if n)
    result.wall_s = perf_counter() - start
    return result


def _hint_answer(
    hint: Plan, hint_cost: Cost | None, notes: list[str], stopped_by: str, start: float
) -> SolveResult:
    """The hint as the answer, no search run: FEASIBLE when it is a valid plan."""
    return SolveResult(
        plan=hint,
        status="FEASIBLE" if hint_cost else "UNKNOWN",
        objective=hint_cost.objective if hint_cost else None,
        bound=None,
        gap=None,
        wall_s=perf_counter() - start,
        hint_objective=hint_cost.objective if hint_cost else None,
        ii=hint_cost.ii if hint_cost else None,
        note="; ".join(n for n in notes if n),
        hint_ii=hint_cost.ii if hint_cost else None,
        stopped_by=stopped_by,
    )


def quick_answer(graph: LoopGraph, target: Target, hint: Plan | None) -> SolveResult | None:
    """What the floors (`model.floors`) settle without a search: the loop is infeasible, or
    no split fits the register file and one partition is the optimum; None otherwise."""
    single = single_partition_plan(graph, target, "optimal")
    blocked = overflows(graph, target)
    if blocked:
        return SolveResult(
            plan=hint or single,
            status="INFEASIBLE",
            objective=None,
            bound=None,
            gap=None,
            wall_s=0.0,
            hint_objective=None,
            ii=None,
            infeasible_groups=[o.resource for o in blocked],
            note=str(blocked[0]),
        )
    why = no_split(graph, target)
    cost = valid_cost(single, graph, target) if why else None
    if cost is None:
        return None
    hint_cost = valid_cost(hint, graph, target) if hint else None
    return SolveResult(
        plan=single,
        status="OPTIMAL",
        objective=cost.objective,
        bound=cost.objective,
        gap=0.0,
        wall_s=0.0,
        hint_objective=hint_cost.objective if hint_cost else None,
        ii=cost.ii,
        note=f"not specialized: {why}",
        hint_ii=hint_cost.ii if hint_cost else None,
    )


def _take_solution(
    result: SolveResult, enc: Encoding, found: Search, hint_cost: Cost | None, notes: list
) -> None:
    """Use the solver's plan if it checks out and beats (or ties) the hint."""
    plan = decode(enc, found.value)
    problems = check_plan(plan, enc.graph, enc.target)
    cost = evaluate(plan, enc.graph, enc.target) if not problems else None
    if cost is None or cost.objective != found.objective:
        why = problems or [f"evaluate gives {cost.objective}, the model {found.objective}"]
        notes.append(f"solver plan rejected: {'; '.join(why)}")
        return
    if hint_cost is not None and hint_cost.objective < found.objective:
        notes.append("the solver's plan is worse than the hint")
        return
    result.plan, result.objective, result.ii = plan, found.objective, cost.ii
    result.gap = _gap(found.objective, result.bound)


def _take_hint(result: SolveResult, hint_cost: Cost) -> None:
    result.status = "FEASIBLE"
    result.objective, result.ii = hint_cost.objective, hint_cost.ii
    result.gap = _gap(result.objective, result.bound)


def _gap(objective: int, bound: int | None) -> float | None:
    if bound is None:
        return None
    return 0.0 if objective <= bound else (objective - bound) / max(1, abs(objective))


def infeasible_groups(
    graph: LoopGraph,
    target: Target,
    options: EncodeOptions | None,
    budget: SolverBudget,
) -> list[str]:
    """Limit groups that together make the loop infeasible: an assumption literal per group,
    the solver's sufficient subset, then shrunk one group at a time (as far as the budget's
    deadline allows; one worker, each question within its deterministic time)."""
    one_worker = replace(budget, workers=1)
    enc = encode(graph, target, replace(options or EncodeOptions(), assumptions=True))
    enc.model.clear_objective()  # feasibility is the question
    by_index = {lit.index: name for name, lit in enc.guards.items()}

    def core(groups: list[str]) -> list[str] | None:
        enc.model.clear_assumptions()
        enc.model.add_assumptions([enc.guards[g] for g in groups])
        solver = cp_model.CpSolver()
        solver_parameters(solver, one_worker, subsolvers=None)  # a plain (default) search
        if run_solver(solver, enc.model) != cp_model.INFEASIBLE:
            return None
        found = [by_index[i] for i in solver.sufficient_assumptions_for_infeasibility()]
        return sorted(set(found), key=LIMIT_GROUPS.index)

    found = core(list(LIMIT_GROUPS))
    if found is None:
        return []
    for group in list(found):
        if group in found and len(found) > 1:
            smaller = core([g for g in found if g != group])
            found = smaller if smaller is not None else found
    return found

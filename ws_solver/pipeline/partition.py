"""TTGIR text in, partitioned TTGIR text out: the one code path the CLI and the drop-in share.

parse → find WS loops → build each loop's graph → run a strategy → annotate (or, for a loop
that should not be specialized, remove its `tt.warp_specialize` tag) → print.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import ir
from ..core.clock import OutOfTime
from ..core.options import SolveOptions, check_optional_name
from ..core.strategy import EXPLORE, PIPELINE_STRATEGIES, Explore, Strategy, parse_strategy
from ..core.wording import count
from ..ir.annotate import annotate_loop, clear_loop
from ..model.annotation import loop_annotation
from ..model.cost import evaluate
from ..model.decision import (
    below_floor,
    departure,
    specialize_floor,
    specializing_pays,
)
from ..model.dfg import build_graph, ws_loops
from ..model.floors import overflows
from ..model.graph import LoopGraph
from ..model.kinds import NodeRole
from ..model.plan import Plan
from ..model.target import Target, target_for
from ..model.traverse import load_feeds_mma
from ..model.unspecialized import kernel_register_conflict, single_partition_plan
from . import plancache, planrecord

# How a loop report's reason starts where no plan fits the loop; what follows says why.
INFEASIBLE = "infeasible: "
# Share of the time limit the heuristic may use before the optimal strategy's search.
HEURISTIC_SHARE = 0.5


@dataclass
class LoopReport:
    """What happened to one loop; `to_dict` is the JSON report's per-loop record."""

    kernel: str
    loop: int
    line: int
    target: str
    ops: int
    strategy: Strategy
    specialized: bool
    reason: str
    ii: int
    objective: int
    wall_s: float
    plan: Plan
    cost: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)  # status, bound, gap, heuristic_objective, ...

    def to_dict(self) -> dict:
        parts = []
        for p in self.plan.partitions:
            members = [n for n in self.plan.nodes_in(p.id)]
            parts.append(
                {
                    "id": p.id,
                    "role": p.role,
                    "warps": p.warps,
                    "registers": p.registers,
                    "stage": p.stage,
                    "ops": len(members),
                }
            )
        return {
            "kernel": self.kernel,
            "loop": self.loop,
            "line": self.line,
            "target": self.target,
            "ops": self.ops,
            "strategy": self.strategy,
            "specialized": self.specialized,
            "reason": self.reason,
            "ii": self.ii,
            "objective": self.objective,
            "wall_s": round(self.wall_s, 4),
            "partitions": parts,
            "channels": len(self.plan.channels),
            "cost": self.cost,
            **self.solver,
        }


def resolve_target(module: ir.Module, override: str | None, triton: str | None = None) -> Target:
    """The target named on the command line, else the module's `ttg.target`, under the
    lowering rules of Triton `triton` (None: 3.6.0)."""
    if override:
        return target_for(override, triton)
    spec = module.ops[0].attr("ttg.target", "") if module.ops else ""
    if not spec:
        raise ValueError("the module has no ttg.target attribute; pass --target")
    return target_for(str(spec), triton)


def plan_loop(
    graph: LoopGraph, target: Target, strategy: Strategy | Explore | str, options: SolveOptions
) -> tuple[Plan, str, dict]:
    """Run one strategy on one loop: (plan, reason, solver details).

    Plans of "optimal" and "heuristic" are cached (ws_solver.pipeline.plancache) unless
    `options.cache` is off; a plan served from the cache says so in its details."""
    strategy = parse_strategy(strategy, PIPELINE_STRATEGIES)
    if strategy == Strategy.NONE:
        return single_partition_plan(graph, target, Strategy.NONE), "strategy none", {}
    if not getattr(options, "cache", True):
        return _solve_loop(graph, target, strategy, options)
    key = plancache.key_for(graph, target, strategy, options)
    stored = plancache.get(key)
    bad = ""
    if stored is not None:
        try:
            plan, reason, details = planrecord.decode(stored, graph, target, key)
            return plan, reason, {**details, "plan_cache": "hit"}
        except planrecord.BadRecord as e:
            bad = str(e)  # a miss: solve again and overwrite it (or drop it)
    plan, reason, details = _solve_loop(graph, target, strategy, options)
    # Retry the others later, and plans cut short by the wall clock (they do not repeat).
    repeats = details.get("stopped_by", "") != "wall clock"
    if details.get("status", "OPTIMAL") in ("OPTIMAL", "FEASIBLE") and repeats:
        plancache.put(key, planrecord.encode(plan, reason, details, graph, target, key))
    elif bad:
        plancache.discard(key)
    if bad:
        details = {**details, "plan_cache": "replaced", "plan_cache_problem": bad}
    return plan, reason, details


def _solve_loop(
    graph: LoopGraph, target: Target, strategy: Strategy, options: SolveOptions
) -> tuple[Plan, str, dict]:
    """Run one strategy; the heuristic and the optimal one within `options.time_limit`
    wall-clock seconds (with `options.wall_clock`)."""
    from ..heuristic import decide

    deadline = options.deadline()
    details: dict = {}
    blocked = overflows(graph, target)
    if blocked:  # no plan fits: nothing to search
        heuristic = single_partition_plan(graph, target, strategy)
        reason = f"{INFEASIBLE}{blocked[0]}"
    else:
        share = 1.0 if strategy == Strategy.HEURISTIC else HEURISTIC_SHARE
        force = options.force and strategy == Strategy.HEURISTIC
        try:
            heuristic, reason = decide(graph, target, force=force, deadline=deadline.share(share))
        except OutOfTime:
            heuristic = single_partition_plan(graph, target, strategy)
            spent = share * options.time_limit
            reason = f"not specialized: the heuristic ran out of time ({spent:g} s)"
            details["stopped_by"] = "wall clock"
    if strategy == Strategy.HEURISTIC:
        return heuristic, reason, details
    if isinstance(strategy, Explore):
        return _explore_loop(graph, target, strategy.rank, heuristic, options)
    if not load_feeds_mma(graph):
        return single_partition_plan(graph, target, Strategy.OPTIMAL), reason, {}
    from ..encode import solve

    result = solve(graph, target, hint=heuristic, budget=options.budget(deadline))
    details = {
        "status": result.status,
        "ii_proven": result.ii_proven,
        "bound": result.bound,
        "gap": result.gap,
        "heuristic_objective": result.hint_objective,
        "solver_wall_s": round(result.wall_s, 4),
        "first_solution_s": _round(result.first_solution_s),
        "first_solution_deterministic": _round(result.first_solution_deterministic),
        "deterministic_s": round(result.deterministic_time, 4),
        "stopped_by": result.stopped_by or details.get("stopped_by", ""),
    }
    plan = result.plan
    if result.status == "INFEASIBLE":
        why = ", ".join(result.infeasible_groups) or "the target's limits"
        return plan, reason if blocked else f"{INFEASIBLE}{why} cannot all hold", details
    if plan.specialized and result.ii is not None:
        single_ii = evaluate(single_partition_plan(graph, target, strategy), graph, target).ii
        floor = specialize_floor(graph, target)
        if not specializing_pays(result.ii, single_ii, floor):
            details |= {"optimum_ii": result.ii, "optimum_objective": result.objective}
            single = single_partition_plan(graph, target, Strategy.OPTIMAL)
            return single, below_floor(result.ii, single_ii, floor), details
    reason = (
        f"specialized: {len(plan.partitions)} partitions"
        if plan.specialized
        else "no better than one partition"
    )
    if result.ii is None or options.margin is None or _same_plan(plan, heuristic):
        return plan, reason, details
    choice = departure(result.hint_ii, result.ii, options.margin)
    details |= {
        "decision": choice.decision,
        "modeled_gain": round(choice.modeled_gain, 6),
        "margin": choice.margin,
        "optimum_ii": result.ii,
        "optimum_objective": result.objective,
    }
    if choice.depart:
        return plan, f"{reason} ({choice.reason()})", details
    return (
        heuristic,
        f"{reason_kept(heuristic)} (heuristic's plan kept: {choice.reason()})",
        details,
    )


def _same_plan(a: Plan, b: Plan) -> bool:
    """Same assignment, partitions and channels (the strategy label aside)."""
    return (a.assignment, a.partitions, a.channels) == (b.assignment, b.partitions, b.channels)


def reason_kept(plan: Plan) -> str:
    if plan.specialized:
        return f"specialized: {len(plan.partitions)} partitions"
    return "not specialized"


def loop_alternatives(
    graph: LoopGraph, target: Target, k: int, hint: Plan, options: SolveOptions
) -> list:
    """`encode.alternatives` of one loop, hinted with the heuristic's plan; one plan (one
    partition) for a loop with nothing to overlap."""
    from ..encode.alternatives import Alternative, alternatives

    if not load_feeds_mma(graph):
        plan = single_partition_plan(graph, target, f"{EXPLORE}0")
        cost = evaluate(plan, graph, target)
        return [Alternative(0, plan, cost.ii, cost.objective, "SKIPPED", ())]
    return alternatives(graph, target, k, hint=hint, budget=options.budget())


def _explore_loop(
    graph: LoopGraph, target: Target, rank: int, heuristic: Plan, options: SolveOptions
) -> tuple[Plan, str, dict]:
    found = loop_alternatives(graph, target, rank + 1, heuristic, options)
    if not found:
        raise ValueError(f"no valid plan for {graph.name}: nothing to explore")
    chosen = found[rank] if rank < len(found) else found[0]
    kept = "" if rank < len(found) else f"; only {count(len(found), 'plan')}, so rank 0"
    parts = len(chosen.plan.partitions)
    what = f"specialized: {parts} partitions" if parts > 1 else "not specialized"
    details = {"status": chosen.status, "rank": chosen.rank, "alternatives": len(found)}
    return chosen.plan, f"{what} (explore rank {chosen.rank}{kept})", details


def _round(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 4)


@dataclass
class PlannedLoop:
    """One loop between planning and annotation."""

    loop: Any  # model.dfg's WS loop record
    graph: LoopGraph
    plan: Plan
    reason: str
    details: dict
    wall_s: float


@dataclass(frozen=True)
class LoopPlace:
    """Which warp-specialized loop: its kernel, index in the module and TTGIR line."""

    kernel: str
    loop: int
    line: int

    def to_dict(self) -> dict:
        return asdict(self)


class LoopError(Exception):
    """`error`, raised while planning or annotating the loop at `loop`."""

    def __init__(self, loop: LoopPlace, error: Exception) -> None:
        super().__init__(str(error))
        self.loop = loop
        self.error = error


def _place(loop: Any) -> LoopPlace:
    return LoopPlace(loop.kernel, loop.index, loop.op.line)


def _plan_each_loop(
    module: ir.Module,
    tgt: Target,
    strategy: Strategy,
    options,
    graphs: Sequence[LoopGraph] | None,
) -> list[PlannedLoop]:
    loops = ws_loops(module)
    if graphs is not None and len(graphs) != len(loops):
        raise ValueError(f"{len(graphs)} loop graphs for {len(loops)} warp-specialized loops")
    planned = []
    for k, loop in enumerate(loops):
        start = time.perf_counter()
        try:
            graph = build_graph(module, loop) if graphs is None else graphs[k]
            plan, reason, details = plan_loop(graph, tgt, strategy, options)
        except Exception as e:
            raise LoopError(_place(loop), e) from e
        planned.append(PlannedLoop(loop, graph, plan, reason, details, time.perf_counter() - start))
    return planned


def settle_kernels(planned: list[PlannedLoop], tgt: Target, strategy: Strategy) -> None:
    """Unspecialize every loop of a kernel where specializing would spill another loop."""
    by_kernel: dict[str, list[PlannedLoop]] = {}
    for item in planned:
        by_kernel.setdefault(item.loop.kernel, []).append(item)
    for items in by_kernel.values():
        reason = kernel_register_conflict([(i.graph, i.plan) for i in items], tgt)
        if reason is None:
            continue
        for item in items:
            if item.plan.specialized:
                item.plan = single_partition_plan(item.graph, tgt, strategy)
                item.reason = reason


def partition_module(
    module: ir.Module,
    strategy: Strategy | str = Strategy.OPTIMAL,
    target: str | None = None,
    options: SolveOptions | None = None,
    graphs: Sequence[LoopGraph] | None = None,
    triton: str | None = None,
) -> list[LoopReport]:
    """Annotate every WS loop of `module` in place; returns one report per loop.

    Each loop is planned on its own, then the loops of one kernel are checked together
    (`kernel_register_conflict`). `graphs`: the loops' graphs when the caller built them
    already (`build_graphs(module)`). `triton`: whose lowering rules the plans follow (None:
    3.6.0; the drop-in passes the installed version). A failure on a loop is a LoopError
    naming it."""
    strategy = parse_strategy(strategy, PIPELINE_STRATEGIES)
    if options is not None and not isinstance(options, SolveOptions):
        raise TypeError(f"options must be None or SolveOptions, not {type(options).__name__}")
    check_optional_name(target, "target")
    check_optional_name(triton, "triton")
    options = options or SolveOptions()
    tgt = resolve_target(module, target, triton)
    planned = _plan_each_loop(module, tgt, strategy, options, graphs)
    settle_kernels(planned, tgt, strategy)
    reports = []
    for item in planned:
        loop, graph, plan = item.loop, item.graph, item.plan
        start = time.perf_counter()
        try:
            cost = evaluate(plan, graph, tgt)
            if plan.specialized:
                annotate_loop(loop.op, loop_annotation(graph, plan, tag=loop.index))
            else:
                clear_loop(loop.op)
        except Exception as e:
            raise LoopError(_place(loop), e) from e
        reports.append(
            LoopReport(
                kernel=loop.kernel,
                loop=loop.index,
                line=loop.op.line,
                target=tgt.name,
                ops=sum(1 for n in graph.nodes if n.role == NodeRole.OP),
                strategy=strategy,
                specialized=plan.specialized,
                reason=item.reason,
                ii=cost.ii,
                objective=cost.objective,
                wall_s=item.wall_s + time.perf_counter() - start,
                plan=plan,
                cost=_cost_summary(cost),
                solver=item.details,
            )
        )
    return reports


def partition_text(
    text: str,
    strategy: Strategy | str = Strategy.OPTIMAL,
    *,
    module: ir.Module | None = None,
    **kwargs: Any,
):
    """Parse, partition and print: (annotated text, per-loop reports). ``module``: ``text``
    parsed already, and not used after (it is annotated in place)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be TTGIR text (str), not {type(text).__name__}")
    module = ir.parse(text) if module is None else module
    reports = partition_module(module, strategy, **kwargs)
    return module.print(), reports


def _cost_summary(cost) -> dict:
    return {
        "ii": cost.ii,
        "bound_by": cost.bound_by,
        "partition_busy": {str(p.id): p.busy for p in cost.partitions},
        "units": cost.units,
        "recurrence": cost.recurrence,
        "channel_latency": cost.channel_latency,
        "channels": cost.channels,
        "channel_bytes": cost.channel_bytes,
        "shared_memory": cost.shared_memory,
        "tensor_memory_columns": cost.tensor_memory_columns,
        "mbarriers": cost.mbarriers,
        "total_warps": cost.total_warps,
        "register_file": cost.register_file,
    }

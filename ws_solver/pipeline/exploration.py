"""`explore`: each warp-specialized loop's best plans under the cost model, best first.

The plans are `encode.alternatives` (no-good cuts on the exact model, distinct in which
partitions run each op that cannot be duplicated), hinted with the heuristic's plan; rank 0
is the modeled optimum. `annotate_rank` writes rank K of every loop into a module, as the
drop-in's "explore:K" strategy compiles it. The knobs the drop-in controls besides the plan
are listed with the result, since a sweep on the GPU crosses them with the plans
(benchmarks/gpu/sweep_plans.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import ir
from ..backends import check_backend, open_backend
from ..core.failures import ReportedError
from ..core.options import (
    DEFAULT_SEED,
    DEFAULT_WORKERS,
    SOLVE_THREADS,
    SURVEY_TIME_LIMIT,
    SolveOptions,
    check_count,
    check_optional_name,
    check_source,
)
from ..core.strategy import EXPLORE, MAX_PLANS, Strategy
from ..core.wording import count
from ..ir.annotate import annotate_loop, clear_loop
from ..model.annotation import loop_annotation
from ..model.cost import evaluate
from ..model.decision import (
    DEPARTURE_MARGIN,
    below_floor,
    departure,
    specialize_floor,
    specializing_pays,
)
from ..model.dfg import build_graph, ws_loops
from ..model.graph import LoopGraph
from ..model.kinds import NodeRole
from ..model.lowering_facts import DEFAULT_TRITON
from ..model.plan import Plan
from ..model.target import Target, target_for
from ..model.unspecialized import single_partition_plan
from .inputs import read_input, require_planner_input
from .partition import (
    PlannedLoop,
    loop_alternatives,
    resolve_target,
    settle_kernels,
)

SCHEMA = "ws-solver.explore"
VERSION = 1
LOOP_FIELDS = ("kernel", "loop", "line", "target", "ops")  # which loop, in a loop's record


class LoopFailed(RuntimeError):
    """A loop whose exploration failed on every attempt a backend made (worker died, raised)."""


@dataclass
class LoopPlans:
    """One loop's enumerated plans and where the heuristic's plan sits among them."""

    kernel: str
    loop: int
    line: int
    target: str
    ops: int
    graph: LoopGraph
    heuristic: Plan
    heuristic_reason: str
    plans: list = field(default_factory=list)  # encode.alternatives.Alternative, best first
    triton: str = DEFAULT_TRITON  # whose lowering rules the plans follow

    def heuristic_rank(self) -> int | None:
        """The rank whose plan runs every op where the heuristic's plan runs it."""
        return self._rank_of(self.heuristic)

    def _rank_of(self, plan: Plan) -> int | None:
        for alt in self.plans:
            if alt.plan.assignment == plan.assignment:
                return alt.rank
        return None

    def tied_rank(self, ii: int) -> int | None:
        """The best rank whose modeled II is `ii` (a plan tied with one of that II)."""
        return next((alt.rank for alt in self.plans if alt.ii == ii), None)

    def optimal_choice(self, heuristic_ii: int, margin: float | None) -> dict:
        """What the `optimal` strategy builds for this loop, as `plan_loop` decides it: the
        modeled optimum (rank 0), or one partition when specializing gains less than the
        loop's floor, and then the heuristic's plan unless the optimum's modeled gain over it
        exceeds `margin` (the model's measured error). `{"plan": "optimum" | "heuristic" |
        "unspecialized", "rank": the listed rank of that plan or null, "tied_with": the best
        rank of the same modeled II, "reason"}`; {} when there are no plans."""
        if not self.plans:
            return {}
        target = _target_of(self)
        best = self.plans[0]
        optimum, optimum_ii, what = best.plan, best.ii, "optimum"
        reason = "no margin: the optimum is taken"
        if best.plan.specialized:
            single = single_partition_plan(self.graph, target, Strategy.OPTIMAL)
            single_ii = evaluate(single, self.graph, target).ii
            floor = specialize_floor(self.graph, target)
            if not specializing_pays(best.ii, single_ii, floor):
                optimum, optimum_ii = single, single_ii
                what, reason = "unspecialized", below_floor(best.ii, single_ii, floor)
        if optimum.assignment == self.heuristic.assignment:
            what, reason = "heuristic", "the heuristic's plan is the optimum"
        elif margin is not None:
            choice = departure(heuristic_ii, optimum_ii, margin)
            reason = choice.reason()
            if not choice.depart:
                optimum, optimum_ii, what = self.heuristic, heuristic_ii, "heuristic"
        return {
            "plan": what,
            "rank": self._rank_of(optimum),
            "tied_with": self.tied_rank(optimum_ii),
            "reason": reason,
        }

    def to_dict(self, margin: float | None = DEPARTURE_MARGIN) -> dict:
        h_cost = evaluate(self.heuristic, self.graph, _target_of(self))
        return {name: getattr(self, name) for name in LOOP_FIELDS} | {
            "heuristic": {
                "ii": h_cost.ii,
                "objective": h_cost.objective,
                "specialized": self.heuristic.specialized,
                "reason": self.heuristic_reason,
                "rank": self.heuristic_rank(),
                "tied_with": self.tied_rank(h_cost.ii),
            },
            "optimal": self.optimal_choice(h_cost.ii, margin),
            "plans": [plan_record(alt, self.graph) for alt in self.plans],
        }


def _target_of(loop: LoopPlans) -> Target:
    return target_for(loop.target, loop.triton)


@dataclass(frozen=True)
class LoopTask:
    """One loop to explore, as sent to a worker."""

    graph: LoopGraph
    target: Target  # with the Triton release whose lowering rules plans follow
    k: int
    options: SolveOptions


def explore_loop(task: LoopTask) -> tuple[Plan, str, list]:
    """The heuristic's plan of one loop, its reason, and the loop's ranked plans."""
    from ..heuristic import decide

    heuristic, reason = decide(task.graph, task.target)
    plans = loop_alternatives(task.graph, task.target, task.k, heuristic, task.options)
    return heuristic, reason, plans


def plan_record(alt: Any, graph: LoopGraph) -> dict:
    plan = alt.plan
    return {
        "rank": alt.rank,
        "strategy": f"{EXPLORE}{alt.rank}",
        "status": alt.status,
        "ii": alt.ii,
        "objective": alt.objective,
        "specialized": plan.specialized,
        "partitions": [
            {
                "id": p.id,
                "role": p.role,
                "warps": p.warps,
                "registers": p.registers,
                "ops": sum(1 for n in plan.nodes_in(p.id) if graph.nodes[n].role == NodeRole.OP),
            }
            for p in plan.partitions
        ],
        "channels": len(plan.channels),
        "assignment": [list(parts) for parts in plan.assignment],
    }


def knobs(target: Target) -> list[dict]:
    """What the drop-in can change besides the plan (the sweep's other candidates)."""
    found = [
        {
            "name": "num_stages",
            "values": "the kernel's num_stages - 1 and + 1",
            "how": "a Triton compile option: Triton's schedule is re-run from the TTIR, so a "
            "TTGIR file alone cannot vary it (benchmarks/gpu/sweep_plans.py compiles it)",
        }
    ]
    if target.name == "sm_90":
        found += [
            {
                "name": "overlap_wgmma",
                "values": [True, False],
                "how": "ws_solver.triton.enable(overlap_wgmma=...): wgmma waits sunk to "
                "their first use",
            },
            {
                "name": "release_per_warp_group",
                "values": [True, False],
                "how": "ws_solver.triton.enable(release_per_warp_group=...): an 8-warp "
                "consumer releases its stages per warp group (PTX rewrite)",
            },
            {
                "name": "take_turns",
                "values": [False, True],
                "how": "ws_solver.triton.enable(take_turns=...): the two warp groups of such "
                "a consumer take turns issuing their wgmmas (PTX rewrite)",
            },
        ]
    return found


def explore_module(
    module: ir.Module,
    k: int,
    target: str | None = None,
    options: SolveOptions | None = None,
    backend: Any = None,
    retries: int = 2,
    triton: str | None = None,
) -> list[LoopPlans]:
    """Up to `k` plans for every warp-specialized loop of `module` (left unchanged), the
    loops explored in this process or, given a `ws_solver.backends.Backend`, as its tasks
    (the same plans either way), under Triton `triton`'s lowering rules (None: 3.6.0);
    LoopFailed names a loop that failed every attempt."""
    if not 1 <= k <= MAX_PLANS:
        raise ValueError(f"k must be between 1 and {MAX_PLANS}, not {k}")
    options = options or SolveOptions()
    tgt = resolve_target(module, target, triton)
    version = tgt.triton.version
    loops = ws_loops(module)
    tasks = [LoopTask(build_graph(module, loop), tgt, k, options) for loop in loops]
    if backend is None:
        found = [explore_loop(task) for task in tasks]
    else:
        results = backend.map(explore_loop, tasks, retries=retries, cpus=SOLVE_THREADS)
        for loop, result in zip(loops, results, strict=True):
            if not result.ok:
                raise LoopFailed(
                    f"{loop.kernel} loop {loop.index} (line {loop.op.line}): failed after "
                    f"{count(result.attempts, 'attempt')}: {result.error}"
                )
        found = [result.value for result in results]
    out = []
    for loop, task, (heuristic, reason, plans) in zip(loops, tasks, found, strict=True):
        graph = task.graph
        ops = sum(1 for n in graph.nodes if n.role == NodeRole.OP)
        record = LoopPlans(
            loop.kernel, loop.index, loop.op.line, tgt.name, ops, graph, heuristic, reason
        )
        record.plans, record.triton = plans, version
        out.append(record)
    return out


def annotate_rank(module: ir.Module, loops: list[LoopPlans], rank: int) -> list[str]:
    """Write rank `rank` of each loop (its rank 0 where it has fewer plans) into `module`,
    with the loops of a kernel checked together as `partition` does; the reasons."""
    tgt = resolve_target(module, loops[0].target if loops else None, _triton_of(loops))
    planned = []
    for loop, record in zip(ws_loops(module), loops, strict=True):
        alt = record.plans[rank] if rank < len(record.plans) else record.plans[0]
        planned.append(PlannedLoop(loop, record.graph, alt.plan, f"explore rank {alt.rank}", {}, 0))
    settle_kernels(planned, tgt, f"{EXPLORE}{rank}")
    for item in planned:
        if item.plan.specialized:
            annotate_loop(item.loop.op, loop_annotation(item.graph, item.plan, tag=item.loop.index))
        else:
            clear_loop(item.loop.op)
    return [item.reason for item in planned]


def document(file: str, k: int, options: SolveOptions, loops: list[LoopPlans]) -> dict:
    """The JSON report of `ws-solver explore` (docs/json-schemas.md, "explore --json")."""
    target = loops[0].target if loops else ""
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "file": file,
        "target": target,
        "triton": _triton_of(loops),
        "k": k,
        "options": {
            "time_limit": options.time_limit,
            "workers": options.workers,
            "seed": options.seed,
        },
        "knobs": knobs(target_for(target)) if target else [],
        "loops": [loop.to_dict(options.margin) for loop in loops],
    }


def _triton_of(loops: list[LoopPlans]) -> str:
    return loops[0].triton if loops else DEFAULT_TRITON


def explore(
    source: str | os.PathLike,
    k: int = 4,
    target: str | None = None,
    time_limit: float = SURVEY_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    backend: Any = None,
    triton: str | None = None,
) -> dict:
    """The best `k` plans of every warp-specialized loop of a TTGIR file or text, as the
    `ws-solver explore --json` document (deterministic for a given seed); `backend`: a
    `ws_solver.backends.Backend` to run the loops on (default: this process); `triton`:
    whose lowering rules the plans follow (None: 3.6.0)."""
    check_source(source)
    check_count(k, "k", 1, MAX_PLANS)
    check_optional_name(target, "target")
    check_optional_name(triton, "triton")
    backend = check_backend(backend)
    options = SolveOptions(time_limit=time_limit, workers=workers, seed=seed, cache=False)
    is_path = isinstance(source, os.PathLike) or "\n" not in source
    if is_path and not Path(source).exists():
        raise FileNotFoundError(f"{source}: no such file (give a TTGIR file or its text)")
    if is_path:
        try:
            text = read_input(source)  # bounded: a regular file of at most MAX_INPUT_BYTES
        except ReportedError as e:
            raise ValueError(e.message) from None
    else:
        text = str(source)
    module = ir.parse(text)
    require_planner_input(source if is_path else "<text>", module)  # not compiled TTGIR
    if isinstance(backend, str):
        with open_backend(backend, 1) as opened:
            loops = explore_module(module, k, target, options, opened, triton=triton)
    else:
        loops = explore_module(module, k, target, options, backend, triton=triton)
    return document(os.fspath(source) if is_path else "<text>", k, options, loops)

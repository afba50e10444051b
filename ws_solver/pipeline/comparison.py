"""Heuristic vs optimal, loop by loop: run both strategies on each loop, and gather the
per-loop records, the failures, the summary and the timing into one comparison document.

A comparison document has a deterministic part (settings, per-loop records, failures,
summary: the same for the same inputs and settings, whatever the number of jobs or the
machine's speed) and a `timing` part (wall times, jobs, plan-cache hits). The JSON structure
is a stable interface, documented in docs/json-schemas.md ("`compare --json`"); bump
`SCHEMA_VERSION` when it changes incompatibly. `report/compare.py` renders it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from time import perf_counter

from ..core.strategy import Strategy
from ..model.check import check_plan
from ..model.cost import evaluate, tiebreak
from ..model.cost_params import PARAMS
from ..model.decision import DEPARTURE_MARGIN, departure
from ..model.graph import LoopGraph
from ..model.plan import Plan, is_assignable
from ..model.target import Target
from .partition import plan_loop
from .stock import StockDecision, loop_stock, stock_summary

SCHEMA = "ws-solver.compare"
SCHEMA_VERSION = 1

# Buckets of the II-reduction histogram (fractions of the heuristic's II), upper bounds.
REDUCTION_BUCKETS = (0.05, 0.10, 0.25, 0.50, 1.0)


# -- one loop ---------------------------------------------------------------------------------


@dataclass
class LoopComparison:
    record: dict  # deterministic
    timing: dict
    optimal: Plan
    optimal_details: dict  # the pipeline's solver details (status, bound, ...)


def compare_loop(file: str, graph: LoopGraph, target: Target, options) -> LoopComparison:
    """Run both strategies on one loop (pipeline.plan_loop, as `partition` does).

    The optimal plan may be unusable (infeasible loop, time out without a plan): callers
    check it (`cli.common.plan_failure`) before using the record."""
    start = perf_counter()
    h_plan, h_reason, h_details = plan_loop(graph, target, Strategy.HEURISTIC, options)
    heuristic_wall = perf_counter() - start
    start = perf_counter()
    # The modeled optimum itself; `departure` says what `optimal` makes of it.
    modeled = replace(options, margin=None) if hasattr(options, "margin") else options
    o_plan, o_reason, o_details = plan_loop(graph, target, Strategy.OPTIMAL, modeled)
    optimal_wall = perf_counter() - start
    candidate = h_plan
    if not h_plan.specialized and o_plan.specialized:
        candidate = _declined_candidate(graph, target) or h_plan
    record = loop_record(
        file, graph, target, (h_plan, h_reason), (o_plan, o_reason, o_details), candidate
    )
    record["optimal"]["departure"] = departure_record(record)
    timing = {
        "file": file,
        "kernel": graph.kernel,
        "loop": graph.loop_index,
        "heuristic_wall_s": round(heuristic_wall, 4),
        "optimal_wall_s": round(optimal_wall, 4),
        "solver_wall_s": o_details.get("solver_wall_s"),
        "plan_cache": o_details.get("plan_cache", "miss"),  # "hit", "miss" or "replaced"
    }
    return LoopComparison(record, timing, o_plan, o_details)


def departure_record(record: dict) -> dict:
    """What the `optimal` strategy does with this optimum (model/decision.py): "same plan"
    when the optimum is no better than the heuristic's plan under the model."""
    if not record["objective_better"]:
        return {"decision": "same plan", "modeled_gain": 0.0, "margin": DEPARTURE_MARGIN}
    h_ii = None if record["heuristic"]["violations"] else record["heuristic"]["ii"]
    choice = departure(h_ii, record["optimal"]["ii"])
    return {
        "decision": choice.decision,
        "modeled_gain": round(choice.modeled_gain, 6),
        "margin": choice.margin,
    }


def decided_specialized(record: dict) -> bool:
    """Whether the `optimal` strategy (the default) specializes the loop: the optimum's
    decision where it departs from the heuristic's plan, else the heuristic's."""
    side = "optimal" if record["optimal"]["departure"]["decision"] == "optimum" else "heuristic"
    return bool(record[side]["specialized"])


def attach_stock(records: Sequence[dict], found: dict[str, StockDecision | None]) -> None:
    """Put stock Triton's decision beside ours in each record (`"stock"`), from the decisions
    recorded for the records' files (`found`, by file; a file not in it: unknown)."""
    for r in records:
        r["stock"] = loop_stock(found.get(r["file"]), r["loop"], decided_specialized(r))


def _declined_candidate(graph: LoopGraph, target: Target) -> Plan | None:
    """The specialized plan the heuristic built and then declined (it did not pay)."""
    try:
        from ..heuristic import decide

        plan, _ = decide(graph, target, force=True)
    except Exception:
        return None
    return plan if plan.specialized else None


def loop_record(file, graph, target, heuristic, optimal, candidate: Plan) -> dict:
    h_plan, h_reason = heuristic
    o_plan, o_reason, details = optimal
    h = plan_summary(h_plan, graph, target, h_reason)
    o = plan_summary(o_plan, graph, target, o_reason)
    status = details.get("status") or "SKIPPED"
    bound = details.get("bound")
    o.update(
        {
            "status": status,
            "bound": bound,
            "bound_ii": ii_lower_bound(bound, target, o["ii"] if status == "OPTIMAL" else None),
            "gap": details.get("gap"),
            "heuristic_objective": details.get("heuristic_objective"),
        }
    )
    if h["ii"] > o["ii"]:
        better = "optimal"
    elif h["ii"] < o["ii"]:
        better = "heuristic"
    else:
        better = "same"
    return {
        "file": file,
        "kernel": graph.kernel,
        "loop": graph.loop_index,
        "line": graph.line,
        "target": target.name,
        "ops": sum(1 for _ in graph.ops()),
        "heuristic": h,
        "optimal": o,
        "better": better,
        "objective_better": o["objective"] < h["objective"],
        "ii_reduction": round((h["ii"] - o["ii"]) / h["ii"], 4) if h["ii"] else 0.0,
        "overrides_against": "plan" if candidate is h_plan else "declined candidate",
        "overrides": overrides(graph, h_plan, o_plan, h_reason, o_reason, candidate),
    }


def ii_lower_bound(bound: int | None, target: Target, proven_ii: int | None) -> int | None:
    """The lower bound on II implied by the solver's bound on the objective
    (II * ii_weight + tie-break): exact when the optimum is proven, else it allows for the
    largest tie-break a plan within the target's limits can have."""
    if proven_ii is not None:
        return proven_ii
    if bound is None:
        return None
    weight = PARAMS.ii_weight
    parts = target.max_partitions
    channels = target.max_mbarriers // 2  # each channel stage takes two mbarriers
    largest = tiebreak(
        parts,
        target.max_warps_per_cta,
        parts * target.setmaxnreg_max // target.setmaxnreg_step,
        channels,
        channels,
    )
    if largest < weight:
        return max(0, bound // weight)
    return max(0, -(-(bound - largest) // weight))


def plan_summary(plan: Plan, graph: LoopGraph, target: Target, reason: str) -> dict:
    cost = evaluate(plan, graph, target)
    return {
        "specialized": plan.specialized,
        "reason": reason,
        "ii": cost.ii,
        "objective": cost.objective,
        "bound_by": cost.bound_by,
        "partitions": len(plan.partitions),
        "roles": [p.role for p in plan.partitions],
        "warps": [p.warps for p in plan.partitions],
        "registers": [p.registers for p in plan.partitions],
        "total_warps": cost.total_warps,
        "register_file": cost.register_file,
        "channels": cost.channels,
        "channel_bytes": cost.channel_bytes,
        "shared_memory": cost.shared_memory,
        "tensor_memory_columns": cost.tensor_memory_columns,
        "merges": len(plan.merges),
        "violations": check_plan(plan, graph, target),
    }


def overrides(
    graph: LoopGraph,
    heuristic: Plan,
    optimal: Plan,
    h_reason: str,
    o_reason: str,
    candidate: Plan,
) -> list[dict]:
    """The heuristic decisions the optimum does not share.

    - `specialize`: one of them specializes the loop, the other does not;
    - `split`: a merge of the heuristic's log (naming its rule) put two nodes together, and
      the optimum runs them in different partitions;
    - `joined`: a def→use edge the heuristic left crossing between partitions (no rule merged
      its ends) runs inside one partition in the optimum.
    When the heuristic declined to specialize and the optimum did, `split`/`joined` compare
    against the plan the heuristic built and declined (`candidate`). When the optimum does
    not specialize, the `specialize` entry says it all."""
    out: list[dict] = []
    if heuristic.specialized != optimal.specialized:
        out.append(
            {
                "change": "specialize",
                "heuristic": h_reason,
                "optimal": o_reason,
            }
        )
    if not optimal.specialized or not candidate.specialized:
        return out
    for m in candidate.merges:
        if _together(candidate, m.src, m.dst) and not _together(optimal, m.src, m.dst):
            out.append(
                {
                    "change": "split",
                    "rule": m.rule,
                    **_pair(graph, m.src, m.dst),
                    **_placements(candidate, optimal, m.src, m.dst),
                }
            )
    seen: set[tuple[int, int]] = set()
    for e in graph.edges:
        pair = (e.src, e.dst)
        if pair in seen or e.src == e.dst:
            continue
        if not (is_assignable(graph, e.src) and is_assignable(graph, e.dst)):
            continue
        if not _together(candidate, e.src, e.dst) and _together(optimal, e.src, e.dst):
            seen.add(pair)
            out.append(
                {
                    "change": "joined",
                    "rule": None,
                    **_pair(graph, e.src, e.dst),
                    "value": e.value,
                    "bytes": e.bytes,
                    **_placements(candidate, optimal, e.src, e.dst),
                }
            )
    return out


def _placements(candidate: Plan, optimal: Plan, a: int, b: int) -> dict:
    """The partitions of nodes `a` and `b` under each plan, as the override records give them."""
    return {
        "heuristic_partitions": [
            list(candidate.partitions_of(a)),
            list(candidate.partitions_of(b)),
        ],
        "optimal_partitions": [list(optimal.partitions_of(a)), list(optimal.partitions_of(b))],
    }


def _together(plan: Plan, a: int, b: int) -> bool:
    return bool(set(plan.partitions_of(a)) & set(plan.partitions_of(b)))


def _pair(graph: LoopGraph, a: int, b: int) -> dict:
    na, nb = graph.nodes[a], graph.nodes[b]
    return {
        "src": a,
        "dst": b,
        "src_label": na.label,
        "dst_label": nb.label,
        "src_op": na.op_name,
        "dst_op": nb.op_name,
    }


def failure_record(
    file: str, message: str, kind: str, code: int, kernel=None, loop=None, line=None
) -> dict:
    """A file or loop that could not be compared; `kind`: bad_input, infeasible, timeout,
    internal."""
    return {
        "file": file,
        "kernel": kernel,
        "loop": loop,
        "line": line,
        "kind": kind,
        "exit_status": code,
        "message": message,
    }


# -- the document -----------------------------------------------------------------------------


def compare_document(
    settings: dict,
    records: Sequence[dict],
    failures: Sequence[dict],
    timings: Sequence[dict],
    files: int,
    jobs: int,
    total_wall_s: float,
) -> dict:
    records = sorted(records, key=_loop_key)
    failures = sorted(failures, key=_loop_key)
    timings = sorted(timings, key=_loop_key)
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "settings": dict(settings),
        "files": files,
        "loops": list(records),
        "failures": list(failures),
        "summary": summarize(records, failures),
        "timing": {
            "jobs": jobs,
            "total_wall_s": round(total_wall_s, 3),
            "heuristic_wall_s": percentiles([t["heuristic_wall_s"] for t in timings]),
            "optimal_wall_s": percentiles([t["optimal_wall_s"] for t in timings]),
            "plan_cache_hits": sum(t["plan_cache"] == "hit" for t in timings),
            "plan_cache_replaced": sum(t["plan_cache"] == "replaced" for t in timings),
            "loops": list(timings),
        },
    }


def deterministic_part(document: dict) -> dict:
    """The document without its `timing` section: equal for equal inputs and settings."""
    return {k: v for k, v in document.items() if k != "timing"}


def _loop_key(r: dict):
    return (r["file"], -1 if r.get("loop") is None else r["loop"])


def summarize(records: Sequence[dict], failures: Sequence[dict]) -> dict:
    n = len(records)
    better = [r for r in records if r["better"] == "optimal"]
    reductions = [r["ii_reduction"] for r in better]
    solved = [r for r in records if r["optimal"]["status"] != "SKIPPED"]
    proven = [r for r in solved if r["optimal"]["status"] == "OPTIMAL"]
    histogram = []
    low = 0.0
    for high in REDUCTION_BUCKETS:
        count = sum(1 for x in reductions if low < x <= high)
        histogram.append({"above": low, "up_to": high, "loops": count})
        low = high
    rules = Counter(o["rule"] for r in records for o in r["overrides"] if o["change"] == "split")
    stocked = bool(records) and all("stock" in r for r in records)
    return {
        "loops": n,
        "failed": len(failures),
        "optimal_better": {
            "loops": len(better),
            "share": _share(len(better), n),
            "ii_reduction": _stats(reductions),
            "histogram": histogram,
        },
        "same_ii": sum(r["better"] == "same" for r in records),
        "same_ii_better_objective": sum(
            r["better"] == "same" and r["objective_better"] for r in records
        ),
        "heuristic_better": sum(r["better"] == "heuristic" for r in records),
        "specialized": {
            "heuristic": sum(r["heuristic"]["specialized"] for r in records),
            "optimal": sum(r["optimal"]["specialized"] for r in records),
        },
        "status": dict(sorted(Counter(r["optimal"]["status"] for r in records).items())),
        "proven_optimal": {
            "loops": len(proven),
            "solved": len(solved),
            "share": _share(len(proven), len(solved)),
        },
        "loops_with_overrides": sum(bool(r["overrides"]) for r in records),
        "departure": dict(
            sorted(Counter(r["optimal"]["departure"]["decision"] for r in records).items())
        ),
        "split_rules": dict(sorted(rules.items())),
    } | ({"stock": stock_summary([r["stock"] for r in records])} if stocked else {})


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _stats(values: Sequence[float]) -> dict:
    if not values:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "mean": round(statistics.fmean(values), 4),
        "max": round(max(values), 4),
    }


def percentiles(values: Sequence[float]) -> dict:
    """p50/p90/p99 (nearest rank), max and sum of wall times, in seconds."""
    if not values:
        return {"p50": None, "p90": None, "p99": None, "max": None, "sum": 0.0}
    ordered = sorted(values)

    def rank(q: float) -> float:
        index = max(0, min(len(ordered) - 1, -(-len(ordered) * q // 100) - 1))
        return round(ordered[int(index)], 4)

    return {
        "p50": rank(50),
        "p90": rank(90),
        "p99": rank(99),
        "max": round(ordered[-1], 4),
        "sum": round(sum(ordered), 4),
    }

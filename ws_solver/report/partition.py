"""The JSON report of `ws-solver partition`: one record per loop, as the pipeline reports it.

The structure is a stable interface, documented in docs/json-schemas.md ("`partition --json`");
bump `SCHEMA_VERSION` when it changes incompatibly. Keys are sorted, so the same run gives
the same bytes (wall times aside).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

SCHEMA = "ws-solver.partition"
# 2: `bound` is the lower bound on II, in cycles; the solver's bound on the objective moved
# to `bound_objective`.
SCHEMA_VERSION = 2

# Keys every record of the "optimal" strategy has (null when the solver did not run).
SOLVER_KEYS = ("status", "bound", "gap", "heuristic_objective", "solver_wall_s")


def loop_record(file: str, report, target) -> dict:
    """`LoopReport.to_dict()` plus the file, with the solver keys filled in for "optimal",
    and the solver's bound told in cycles, the unit of `ii` (`bound`), beside the bound on
    the internal objective it comes from (`bound_objective`)."""
    from ..pipeline.comparison import ii_lower_bound

    record = {"file": file, **report.to_dict()}
    if report.strategy == "optimal":
        for key in SOLVER_KEYS:
            record.setdefault(key, None)
        if record["status"] is None:
            record["status"] = "SKIPPED"  # nothing to overlap: the solver was not asked
        raw = record["bound"]
        # Proven optimal: the bound is the optimum's II (the plan written may be the
        # heuristic's, kept under the margin).
        proven = record.get("optimum_ii", record["ii"]) if record["status"] == "OPTIMAL" else None
        record["bound_objective"] = raw
        record["bound"] = ii_lower_bound(raw, target, proven) if raw is not None else None
    return record


def partition_document(file: str, target, strategy: str, options, reports: Sequence) -> dict:
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "file": file,
        "target": target.name,
        "triton": target.triton.version,
        "strategy": strategy,
        "options": {
            "time_limit": options.time_limit,
            "workers": options.workers,
            "seed": options.seed,
            "cache": bool(getattr(options, "cache", True)),
        },
        "loops": [loop_record(file, r, target) for r in reports],
    }


def to_json(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def summary_line(file: str, report) -> str:
    """One line per loop for people: what was decided and why."""
    place = f"{file}:{report.line}: {report.kernel} loop {report.loop}"
    if report.specialized:
        parts = ", ".join(
            f"{p.role or p.id}:{p.warps}w/{p.registers}r" for p in report.plan.partitions
        )
        what = f"specialized into {len(report.plan.partitions)} partitions ({parts})"
    else:
        reason = report.reason
        what = reason if reason.startswith("not specialized") else f"not specialized: {reason}"
    status = report.solver.get("status")
    extra = f", {status}" if status else ""
    if report.solver.get("stopped_by") == "loop size":  # encode.solve.LOOP_SIZE
        extra += ", too large for an exact solve: the heuristic's plan"
    if report.solver.get("plan_cache") == "hit":
        extra += ", from the plan cache"
    elif report.solver.get("plan_cache") == "replaced":
        extra += f", solved again: bad plan-cache record ({report.solver['plan_cache_problem']})"
    return f"{place}: {what}; modeled II {report.ii}{extra}"

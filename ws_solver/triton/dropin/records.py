"""What a drop-in compile's report records: the kernel's WS loops and where they are in the
source, each failed attempt and the loops it is about, the loop records of the attempt used,
and the one warning a fallback gives."""

from __future__ import annotations

import json
import re
from typing import Any

from ...core.strategy import Explore, Strategy
from ...pipeline.partition import INFEASIBLE, LoopError, LoopPlace, LoopReport
from ..guard import client as lguard
from ..rewrites.chain import RegisterRequests
from ..toolchain.reasons import failure_reason
from .session import STOCK, CompileReport

# The warning, once per session, when the sm_90 stage-release fix cannot be imported.
HOPPER_UNAVAILABLE = (
    "ws_solver: ws_solver.triton.rewrites.hopper is not available; warp-specialized sm_90 "
    "kernels are compiled through Triton 3.6's generic route without the async-wgmma release "
    "fix (see docs/dropin.md)"
)
WS_LOOP = re.compile(r"^\s*\}.*\btt\.warp_specialize(?![\w.])", re.MULTILINE)
_FUNC = re.compile(r"\btt\.func\s+(?:(public|private)\s+)?@([\w$.]+)")


class SolverGaveNoPlan(RuntimeError):
    """The solver ended without a plan of its own (infeasible, or out of time)."""


class LoweringRejected(RuntimeError):
    """The guard's child process could not lower the partitioned module (it hung, crashed or
    failed); ``verdict`` says how, ``reason`` is the one-line summary."""

    def __init__(self, verdict: lguard.Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict
        self.reason = verdict.reason


def plan_cache_notes(loop_reports: list[LoopReport]) -> list[str]:
    """A note per loop whose plan-cache record was bad (and was solved again)."""
    return [
        f"plan cache: loop {r.loop}: bad record solved again ({r.solver.get('plan_cache_problem')})"
        for r in loop_reports
        if r.solver.get("plan_cache") == "replaced"
    ]


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    more = f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
    return (lines[0][:300] if lines else "") + more


def kernel_name(ttir: str) -> str:
    funcs = _FUNC.findall(ttir)
    public = [name for vis, name in funcs if vis == "public"]
    return (public or [name for _, name in funcs] or ["<unknown>"])[0]


def loop_sites(part_text: str, module: Any = None) -> list[dict]:
    """Index, TTGIR line and Python source position of each WS loop (best effort);
    ``module``: the text parsed already."""
    try:
        from ... import ir as wir
        from ...model.dfg import ws_loops

        module = wir.parse(part_text) if module is None else module
        return [
            {"loop": loop.index, "line": loop.op.line, "source": module.source_location(loop.op)}
            for loop in ws_loops(module)
        ]
    except Exception:
        return [{"loop": i, "line": 0, "source": ""} for i in range(_count_ws(part_text))]


def _count_ws(text: str) -> int:
    return len(WS_LOOP.findall(text))


def failed_loops(e: Exception, loop_reports: list[LoopReport], sites: list[dict]) -> list[dict]:
    """The loops an exception is about: the one ws_solver names, else the specialized ones,
    else all WS loops of the kernel."""
    if isinstance(e, LoopError):
        return [s for s in sites if s["loop"] == e.loop.loop] or [e.loop.to_dict()]
    specialized = {r.loop for r in loop_reports if r.specialized}
    return [s for s in sites if s["loop"] in specialized] or sites


def failure(strategy: str, loops: list[dict], e: Exception, stderr: str, wall: float) -> dict:
    if isinstance(e, LoopError):
        e = e.error
    reason = e.reason if isinstance(e, LoweringRejected) else failure_reason(e, stderr)
    return {
        "strategy": strategy,
        "loops": loops,
        "reason": reason,
        "wall_s": round(wall, 4),
    }


def _describe_loops(loops: list[dict]) -> str:
    if not loops:
        return "the kernel"
    parts = []
    for s in loops:
        where = s.get("source") or (f"TTGIR line {s['line']}" if s.get("line") else "")
        parts.append(f"loop {s.get('loop')}" + (f" ({where})" if where else ""))
    return ", ".join(parts)


def fallback_message(report: CompileReport) -> str:
    failures = "; ".join(
        f"{f['strategy']} failed on {_describe_loops(f['loops'])}: {f['reason']}"
        for f in report.fallbacks
    )
    used = "Triton's own make_ttgir" if report.strategy_used == STOCK else report.strategy_used
    return (
        f"ws_solver: kernel '{report.kernel}' (sm_{report.capability}) asked for "
        f"{report.strategy_asked}: {failures}; compiled with {used}"
    )


def loop_records(
    strategy: Strategy | Explore,
    loop_reports: list[LoopReport],
    sites: list[dict],
    applied: list | None,
) -> list[dict]:
    by_loop = {s["loop"]: s for s in sites}
    if strategy == Strategy.TRITON:
        return [{**s, "strategy": Strategy.TRITON} for s in sites]
    registers = iter(applied or [])
    records = []
    for r in loop_reports:
        # JSON-shaped (lists, not tuples): the record also travels in the binary's metadata.
        plan = json.loads(r.plan.to_json())
        record = {**by_loop.get(r.loop, {}), **r.to_dict(), "plan": plan}
        if r.specialized:
            record["registers_applied"] = next(registers, None)
        records.append(record)
    return records


def register_requests(loop_reports: list[LoopReport]) -> RegisterRequests:
    """Per specialized loop's plan, in loop order: ((partition id, registers), ...)."""
    plans = (r.plan for r in loop_reports if r.specialized)
    return tuple(
        tuple((p.id, p.registers) for p in sorted(plan.partitions, key=lambda p: p.id))
        for plan in plans
    )


def check_solver_status(loop_reports: list[LoopReport]) -> None:
    """Treat a loop whose solver status is not OPTIMAL/FEASIBLE as a failed attempt (the
    pipeline then hands back its hint, which is the heuristic's plan, not an optimal one)."""
    for r in loop_reports:
        status = r.solver.get("status")
        if status is not None and status not in ("OPTIMAL", "FEASIBLE"):
            why = r.reason.removeprefix(INFEASIBLE)
            why = f" ({why})" if why != r.reason else ""
            e = SolverGaveNoPlan(f"solver status {status} on loop {r.loop}{why}")
            raise LoopError(LoopPlace(r.kernel, r.loop, r.line), e)

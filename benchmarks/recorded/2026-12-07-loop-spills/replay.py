"""The decision check's rule replayed on a census's recorded builds, with and without where
the spills sit: which sm_90 decisions the hot-loop rule changes (issue 48, item 1).

    python benchmarks/recorded/2026-12-07-loop-spills/replay.py FILE.jsonl [...]

`configspace_usage` records every build the check weighed (`decision.builds`: ours, the other
decision, stock's, Triton's partition), each with its ptxas usage and, where it spilled, its
SASS loop counts. `settle` is replayed on them twice: as recorded (the new rule; it must give
the recorded `kept`) and with the loop counts dropped (bytes alone: the rule before). A
replay that needs a build the census did not record (the old rule trying Triton's partition
where the new one did not) is reported as such, not guessed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from ws_solver.model.target import SM90
from ws_solver.triton.dropin.decision_check import Built, Candidate, settle
from ws_solver.triton.toolchain.binary_usage import BinaryUsage


class Missing(Exception):
    """The replay asked for a build the census did not record."""


def built(entry: dict | None, hot: bool) -> Built:
    """A recorded build; without its SASS loop counts unless `hot`."""
    if entry is None:
        raise Missing
    usage = entry.get("usage")
    parsed = BinaryUsage.from_dict(usage) if isinstance(usage, dict) else None
    if parsed is not None and not hot:
        parsed = replace(parsed, loop_spills=None)
    return Built(entry["status"], entry.get("specialized"), parsed, entry.get("reason", ""))


def candidate(entry: dict) -> Candidate:
    """The candidate a build's plan label names (its planned decision as the drop-in sets it)."""
    label = entry["plan"]
    if label == "triton":
        return Candidate(label, "", [], True, triton_decides=True)
    specialized = {"unspecialized": False, "heuristic, forced": True}.get(
        label, bool(entry.get("specialized"))
    )
    return Candidate(label, "", [], specialized)


def replay(builds: dict, hot: bool) -> str:
    """The label `settle` keeps on these builds."""
    ours = candidate(builds["ours"])

    def build(c: Candidate) -> Built:
        for role in ("ours", "other", "triton"):
            entry = builds.get(role)
            if entry is not None and entry.get("plan") == c.label:
                return built(entry, hot)
        raise Missing

    def flip(c: Candidate) -> Candidate:
        if "other" not in builds:
            raise Missing
        return candidate(builds["other"])

    def triton() -> Candidate:
        if "triton" not in builds:
            raise Missing
        return candidate(builds["triton"])

    def stock() -> Built:
        entry = builds.get("stock")
        if entry is None or entry.get("status") == "not built":
            raise Missing
        return built(entry, hot)

    return settle(ours, SM90, flip, build, stock, triton).record["kept"]


def hot_of(entry: dict | None) -> str:
    usage = (entry or {}).get("usage") or {}
    spills = usage.get("loop_spills")
    if not usage:
        return (entry or {}).get("status", "-")
    b = max(usage.get("stack_bytes", 0), usage.get("spill_store_bytes") or 0)
    return f"{b} B/{spills['hot']} hot" if spills else f"{b} B"


def main(paths: list[str]) -> int:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    decided = [r for r in rows if r.get("strategy") == "optimal" and r.get("decision")]
    changed, missing, mismatched = [], [], []
    for r in decided:
        builds = r["decision"].get("builds") or {}
        if "ours" not in builds:
            continue
        try:
            new, old = replay(builds, True), replay(builds, False)
        except Missing:
            missing.append(r["config"])
            continue
        if new != r["decision"]["kept"]:
            mismatched.append(r["config"])
        if new != old:
            roles = ", ".join(f"{k} {hot_of(builds.get(k))}" for k in builds)
            changed.append(f"{r['triton']} {r['config']}: {old} -> {new} ({roles})")
    print(f"{len(decided)} decisions replayed; {len(changed)} changed by the hot-loop rule")
    print(f"not replayable (a build the census did not record): {len(missing)} {missing}")
    print(f"new-rule replay differs from the recorded kept: {len(mismatched)} {mismatched}")
    for line in changed:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The before/after tables of the README: the earlier run's rows
(2026-12-07-measured-timer-h100, no warm-up) for the configs this run measured, summarized
beside this run's (targets, first launch, the tuning's time over the bench's). CPU only.
Usage: python3 compare.py (from the repository root)."""

import json
import statistics
from pathlib import Path

from benchmarks.gpu import measured_summary

RESULTS = Path("benchmarks/results")
now = measured_summary.load([RESULTS / "2026-12-07-power-state-h100/space-triton36.jsonl"])
measured = {(r["family"], r["name"]) for r in now}
before_path = RESULTS / "2026-12-07-measured-timer-h100/triton36.jsonl"
before = [
    r
    for r in map(json.loads, before_path.read_text().splitlines())
    if (r["family"], r["name"]) in measured
]
for label, rows in (("before (no warm-up)", before), ("now (100 ms warm-up)", now)):
    print(f"## {label}: {len(rows)} configs")
    print("\n".join(line for line in measured_summary.summary_lines(rows) if line.strip()))
    print()


def bench_s(rows):
    """The tuning's timing seconds (its `bench_s`), median and max."""
    xs = [
        t["bench_s"]
        for r in rows
        if (t := (r.get("measured") or {}).get("tuning") or {}).get("bench_s") is not None
    ]
    return statistics.median(xs), max(xs)


winners = {(r["family"], r["name"]): (r.get("measured") or {}).get("winner") for r in before}
same = sum(
    winners.get((r["family"], r["name"])) == (r.get("measured") or {}).get("winner") for r in now
)
print(f"the tuning's timing (bench_s), median / max: before {bench_s(before)}, now {bench_s(now)}")
print(f"measured picked the same candidate in {same} of {len(now)} configs")

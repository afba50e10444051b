"""The measured-candidates sweep read back: per candidate, its wins and what leaving it out
costs (by the tuning's own timings), the default list's figures, the first launch's cost.

    python benchmarks/recorded/2026-12-07-measured-candidates-h100/analysis.py \
        benchmarks/results/2026-12-07-measured-candidates-h100
"""

from __future__ import annotations

import collections
import json
import math
import statistics
import sys
from pathlib import Path

DEFAULT = ("stock", "optimal", "none", "stock~s+1", "optimal~s+1")


def rows(folder: Path, version: str) -> list[dict]:
    out = []
    for path in sorted(folder.glob(f"triton{version}*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def internal(row: dict) -> dict[str, float]:
    """Each candidate's median ms in measured's tuning (a duplicate takes its twin's; a
    candidate dropped after the first round keeps its one time)."""
    cands = ((row.get("measured") or {}).get("tuning") or {}).get("candidates", [])
    times = {c["name"]: c["median_ms"] for c in cands if c.get("median_ms")}
    for c in cands:
        if c["status"] == "duplicate" and c.get("same_as") in times:
            times[c["name"]] = times[c["same_as"]]
    return times


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def best_of(times: dict[str, float], names: tuple[str, ...]) -> float | None:
    found = [times[n] for n in names if n in times]
    return min(found) if found else None


def report(folder: Path, version: str) -> None:
    data = rows(folder, version)
    both = [r for r in data if "stock" in internal(r)]
    names = sorted({n for r in data for n in internal(r)})
    asked = tuple(c["name"] for c in (data[0]["measured"]["tuning"]["candidates"]))
    print(f"## Triton {version}: {len(data)} configs, candidates {', '.join(asked)}")
    wins = collections.Counter(r["measured"].get("winner") for r in data)
    print("winners (all configs):", dict(wins.most_common()))
    print(f"by the tuning's own timings, stock / best, geomean over n = {len(both)} (stock timed):")
    full = [r and internal(r)["stock"] / best_of(internal(r), asked) for r in both]
    print(f"  all asked: {geomean(full):.3f}")
    for name in names:
        rest = tuple(n for n in asked if n != name)
        loo = [internal(r)["stock"] / best_of(internal(r), rest) for r in both]
        print(f"  without {name}: {geomean(loo):.3f}")
    if set(DEFAULT) <= set(asked) and set(DEFAULT) != set(asked):
        d = [internal(r)["stock"] / best_of(internal(r), DEFAULT) for r in both]
        print(f"  the default list {DEFAULT}: {geomean(d):.3f}")
    bench = [
        r["stock"]["median_ms"] / r["measured"]["median_ms"]
        for r in both
        if r["stock"].get("median_ms") and r["measured"].get("median_ms")
    ]
    print(f"bench timing, stock / measured: {geomean(bench):.3f} (n = {len(bench)})")
    builds = collections.defaultdict(list)
    for r in data:
        for variant, b in (r.get("builds") or {}).items():
            if "s" in b:
                builds[variant].append(b["s"])
    print(
        "build seconds in a worker (median): "
        + ", ".join(f"{k} {statistics.median(v):.2f} (n {len(v)})" for k, v in builds.items())
    )
    tunings = [r["measured"]["tuning"] for r in data if (r["measured"].get("tuning") or {})]
    for part in ("compile_s", "check_s", "bench_s", "total_s"):
        values = [t[part] for t in tunings if t.get(part) is not None]
        print(f"  tuning {part}: median {statistics.median(values):.2f}, max {max(values):.2f}")
    dropped = sum(c["status"] == "dropped" for t in tunings for c in t["candidates"])
    print(f"candidates dropped after the first round: {dropped} over {len(tunings)} tunings")


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    for version in ("36", "39"):
        report(folder, version)
        print()

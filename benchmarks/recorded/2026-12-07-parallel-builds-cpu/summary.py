"""Compile-time runs read back: each run's optimal/stock median and p90, and the pooled figure
(per config, the median of its times over the runs, ours over stock's).

    python benchmarks/recorded/2026-12-07-parallel-builds-cpu/summary.py \
        benchmarks/results/2026-12-07-parallel-builds-cpu
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from benchmarks.cpu.compile_time import ratios  # noqa: E402
from benchmarks.cpu.configspace_records import percentile  # noqa: E402


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def line(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {statistics.median(values):.2f}x | "
        f"{percentile(values, 90):.2f}x | {max(values):.2f}x |"
    )


def pooled(runs: list[list[dict]]) -> list[float]:
    """Per config compiled by both in every run: median optimal s / median builtin s."""
    times: dict[tuple[str, str], list[float]] = {}
    for run in runs:
        for r in run:
            if r.get("ok"):
                times.setdefault((r["config"], r["strategy"]), []).append(r["compile_s"])
    out = []
    for (config, strategy), stock in times.items():
        ours = times.get((config, "optimal"))
        if strategy == "builtin" and ours and len(ours) == len(stock) == len(runs):
            out.append(statistics.median(ours) / statistics.median(stock))
    return out


def main(folder: Path) -> None:
    print("| run | n | median | p90 | max |\n|---|--:|--:|--:|--:|")
    for prefix in (
        "base-sequential",
        "sequential",
        "first",
        "all7-base-sequential",
        "all7-sequential",
    ):
        files = sorted(folder.glob(f"{prefix}-*.jsonl"))
        runs = [rows(f) for f in files]
        for f, run in zip(files, runs, strict=True):
            print(line(f.stem, ratios(run)))
        if len(runs) > 1:
            print(line(f"{prefix}, pooled over {len(runs)} runs", pooled(runs)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

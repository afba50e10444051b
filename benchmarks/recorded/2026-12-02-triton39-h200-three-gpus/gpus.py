"""Stock / ws_solver `optimal` over the balanced 24-round runs on several H200s: per config,
per run (the 16-config geomean), per GPU, per block of six rounds (two in each place of the
order), and how far the first 3 or 6 rounds read from all of them. Checks that every binary is
the one of the rotated runs' r5. The runs are those of the results folders named (a, b, c of
the three-GPU folder by default; d, e of the gpus-d-e one). Run from the repository root:

    python benchmarks/recorded/2026-12-02-triton39-h200-three-gpus/gpus.py    # three GPUs
    python benchmarks/recorded/2026-12-02-triton39-h200-three-gpus/gpus.py \
        2026-12-02-triton39-h200-three-gpus 2026-12-02-triton39-h200-gpus-d-e   # five GPUs

The 10 configs not timed here build the same cubin under stock and `optimal` (so their ratio
is 1 by construction; see the README); the 16-config geomean is the product of the 6 timed
ratios to the power 1/16.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO))  # run as a plain file

from benchmarks.common.stats import mean_interval  # noqa: E402

THREE_GPUS = "2026-12-02-triton39-h200-three-gpus"
R5 = RESULTS / "2026-12-02-triton39-h200-rotated" / "r5" / "results.json"
STOCK_CONFIGS = 16
BLOCK = 6


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def rows(path: Path) -> dict[tuple[str, str, str], dict]:
    return {
        (r["kernel"], r["config"], r["strategy"]): r
        for r in json.loads(path.read_text())["results"]
    }


def rounds(path: Path) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    """(stock's ms per round, optimal's) per config."""
    found = rows(path)
    return {
        (kernel, config): (
            found[(kernel, config, "builtin")]["bench"]["ms_rounds"],
            row["bench"]["ms_rounds"],
        )
        for (kernel, config, strategy), row in sorted(found.items())
        if strategy == "optimal"
    }


def corpus_ratio(pairs: list[tuple[list[float], list[float]]]) -> float:
    """The 16-config geomean: the timed configs' ratios of medians, the others 1."""
    ratios = [statistics.median(a) / statistics.median(b) for a, b in pairs]
    return math.exp(sum(map(math.log, ratios)) / STOCK_CONFIGS)


def main(folders: list[str]) -> None:
    reference = {key: row["compile"].get("binary") for key, row in rows(R5).items()}
    runs = [p for f in folders for p in sorted((RESULTS / f).glob("[a-z][0-9]/results.json"))]
    per_gpu: dict[str, list[float]] = {}
    per_config: dict[tuple[str, str], list[float]] = {}
    blocks: list[list[float]] = []
    for run in runs:
        same = sum(reference.get(k) == r["compile"].get("binary") for k, r in rows(run).items())
        timed = rounds(run)
        value = corpus_ratio(list(timed.values()))
        per_gpu.setdefault(run.parent.name[0], []).append(value)
        for key, (a, b) in timed.items():
            per_config.setdefault(key, []).append(statistics.median(a) / statistics.median(b))
        n = min(len(a) for a, _ in timed.values())
        block = [
            corpus_ratio([(a[i : i + BLOCK], b[i : i + BLOCK]) for a, b in timed.values()])
            for i in range(0, n - n % BLOCK, BLOCK)
        ]
        blocks.append(block)
        print(
            f"{run.parent.name}: {value:.4f}  (rounds {n}; blocks of {BLOCK}: "
            + " ".join(f"{x:.4f}" for x in block)
            + f"; binaries as r5: {same} of {len(rows(run))})"
        )
    every = [x for xs in per_gpu.values() for x in xs]
    low, high, mid = min(every), max(every), statistics.median(every)
    print(f"all runs: n={len(every)}, {low:.4f}-{high:.4f}, median {mid:.4f}")
    for gpu, xs in per_gpu.items():
        print(
            f"GPU {gpu}: n={len(xs)}, {min(xs):.4f}-{max(xs):.4f}, "
            f"median {statistics.median(xs):.4f}"
        )
    first = [b[0] for b in blocks]
    rest = [x for b in blocks for x in b[1:]]
    print(
        f"first block of {BLOCK} rounds: mean {statistics.mean(first):.4f} (n={len(first)}); "
        f"later blocks: mean {statistics.mean(rest):.4f} (n={len(rest)}); "
        f"first block the run's lowest in {sum(b[0] == min(b) for b in blocks)} of {len(blocks)}"
    )
    for side, name in ((0, "stock"), (1, "optimal")):
        drift = [
            geomean(
                [
                    statistics.median(t[side][:BLOCK]) / statistics.median(t[side][BLOCK:])
                    for t in run.values()
                ]
            )
            for run in map(rounds, runs)
        ]
        print(
            f"{name}: first block / later rounds, geomean over configs, per run: "
            + " ".join(f"{x:.4f}" for x in drift)
        )
    medians = [statistics.median(xs) for xs in per_gpu.values()]
    mean, low, high = mean_interval(medians)
    print(
        f"GPU medians (n={len(medians)}): mean {mean:.4f}, sd {statistics.stdev(medians):.4f}, "
        f"95% interval of the mean {low:.4f}-{high:.4f}"
    )
    for (kernel, config), xs in per_config.items():
        print(f"{kernel} {config}: {min(xs):.3f}-{max(xs):.3f}, median {statistics.median(xs):.3f}")
    short_runs(runs)


def short_runs(runs: list[Path]) -> None:
    """How far a config's ratio read from only its first k rounds (whole cycles of the three
    timed entries, as a short tuning would) lies from the run's 24-round reading."""
    for k in (3, 6):
        deviations = sorted(
            abs(
                (statistics.median(a[:k]) / statistics.median(b[:k]))
                / (statistics.median(a) / statistics.median(b))
                - 1
            )
            for run in runs
            for a, b in rounds(run).values()
        )
        p95 = deviations[math.ceil(0.95 * len(deviations)) - 1]
        print(
            f"first {k} rounds against all: n={len(deviations)} config-runs, |deviation| "
            f"median {100 * statistics.median(deviations):.2f}%, 95th percentile "
            f"{100 * p95:.2f}%, max {100 * deviations[-1]:.2f}%"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or [THREE_GPUS])

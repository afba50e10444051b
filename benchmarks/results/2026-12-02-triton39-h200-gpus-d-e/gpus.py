"""Stock / ws_solver `optimal` over the sixteen runs on five H200s: a, b, c of
`../2026-12-02-triton39-h200-three-gpus` and d, e here. Per config, per run (the 16-config
geomean), per GPU, and per block of six rounds (two in each place of the order). Checks that
every binary is the one of the rotated runs' r5. Run from the repository root:

    python benchmarks/results/2026-12-02-triton39-h200-gpus-d-e/gpus.py

The 10 configs not timed here build the same cubin under stock and `optimal` (so their ratio
is 1 by construction; see the README); the 16-config geomean is the product of the 6 timed
ratios to the power 1/16.
"""

from __future__ import annotations

import importlib.util
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
EARLIER = HERE.parent / "2026-12-02-triton39-h200-three-gpus"
sys.path.insert(0, str(HERE.parents[2]))  # the repository root: run as a plain file

from benchmarks.stats import mean_interval  # noqa: E402


def _earlier_script():
    """The three-GPU folder's gpus.py: its readers of a run (rows, rounds, corpus_ratio)."""
    spec = importlib.util.spec_from_file_location("three_gpus", EARLIER / "gpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_three = _earlier_script()
R5, STOCK_CONFIGS, BLOCK = _three.R5, _three.STOCK_CONFIGS, _three.BLOCK
geomean, rows, rounds, corpus_ratio = (
    _three.geomean,
    _three.rows,
    _three.rounds,
    _three.corpus_ratio,
)


def main() -> None:
    reference = {key: row["compile"].get("binary") for key, row in rows(R5).items()}
    runs = sorted(EARLIER.glob("[a-z][0-9]/results.json")) + sorted(
        HERE.glob("[a-z][0-9]/results.json")
    )
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
    main()

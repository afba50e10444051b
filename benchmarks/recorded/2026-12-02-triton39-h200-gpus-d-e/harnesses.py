"""Where the earlier harnesses' lower readings of the issue-22 ratio come from: per config,
the median stock and `optimal` times and their ratio in each group of runs of the same
binaries, and each config's share of the gap to the balanced runs (log ratio / 16, so that
the shares add up to the gap of the 16-config geomean). Run from the repository root:

    python benchmarks/recorded/2026-12-02-triton39-h200-gpus-d-e/harnesses.py
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"
RUN = RESULTS / Path(__file__).parent.name  # the run folder of these results
STOCK_CONFIGS = 16
GROUPS = {
    # 7 rounds; none, optimal~wg0 (and builtin) timed with optimal in every round.
    "runs 14-17": sorted(RESULTS.glob("2026-12-02-triton39-h200-run14-17/run*/results.json")),
    # 5 rounds; builtin and none besides optimal.
    "run 18": [RESULTS / "2026-12-02-triton39-h200-run18" / "results.json"],
    # 5-7 rounds, two in each place of the order (vendor, optimal, stock).
    "rotated r1-r5": sorted(RESULTS.glob("2026-12-02-triton39-h200-rotated/r*/results.json")),
    # 24 rounds, 8 in each place; five GPUs.
    "balanced, 5 GPUs": sorted(RESULTS.glob("2026-12-02-triton39-h200-three-gpus/*/results.json"))
    + sorted(RUN.glob("*/results.json")),
}
REFERENCE = "balanced, 5 GPUs"


def times(path: Path) -> dict[tuple[str, str], dict[str, float]]:
    """{(kernel, config): {strategy: ms}} for stock and optimal, where both were timed and
    their cubins differ."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for row in json.loads(path.read_text())["results"]:
        bench = row.get("bench") or {}
        if row["strategy"] in ("builtin", "optimal") and "ms" in bench:
            out.setdefault((row["kernel"], row["config"]), {})[row["strategy"]] = bench["ms"]
    return {key: ms for key, ms in out.items() if len(ms) == 2 and len(set(ms.values())) == 2}


def medians(paths: list[Path]) -> dict[tuple[str, str], tuple[float, float]]:
    """Per config: the median over the runs of stock's ms and of optimal's ms."""
    runs = [times(p) for p in paths]
    keys = sorted(set.intersection(*(set(r) for r in runs)))
    return {
        key: (
            statistics.median(r[key]["builtin"] for r in runs),
            statistics.median(r[key]["optimal"] for r in runs),
        )
        for key in keys
    }


def main() -> None:
    table = {name: medians(paths) for name, paths in GROUPS.items()}
    reference = table[REFERENCE]
    for name, found in table.items():
        print(f"{name} (n={len(GROUPS[name])} runs)")
        gap = 0.0
        for key, (stock, ours) in found.items():
            share = math.log(stock / ours) - math.log(reference[key][0] / reference[key][1])
            gap += share / STOCK_CONFIGS
            print(
                f"  {key[0]} {key[1]:<34} stock {stock:.3f}  optimal {ours:.3f}  "
                f"ratio {stock / ours:.3f}  share of the gap {100 * share / STOCK_CONFIGS:+.2f}%"
            )
        ratio = math.exp(sum(math.log(s / o) for s, o in found.values()) / STOCK_CONFIGS)
        print(
            f"  16-config geomean of the medians {ratio:.4f}; gap to {REFERENCE} {100 * gap:+.2f}%"
        )


if __name__ == "__main__":
    main()

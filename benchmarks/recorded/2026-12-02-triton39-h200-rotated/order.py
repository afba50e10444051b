"""Stock / ws_solver ratios of the rotated runs: per run (all rounds, and the first six, two
per place in the order), and per place in the order over the six configs whose binaries
differ. Run from the repository root:

    python benchmarks/recorded/2026-12-02-triton39-h200-rotated/order.py
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "results" / Path(__file__).parent.name
ORDERS = ("vendor, optimal, builtin", "optimal, builtin, vendor", "builtin, vendor, optimal")


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def pairs(path: Path) -> list[tuple[list[float], list[float], bool]]:
    """(stock's ms per round, optimal's, same binary) for every config both timed."""
    rows = {
        (r["kernel"], r["config"], r["strategy"]): r
        for r in json.loads(path.read_text())["results"]
    }
    out = []
    for (kernel, config, strategy), row in sorted(rows.items()):
        stock = rows.get((kernel, config, "builtin"))
        if strategy != "optimal" or stock is None:
            continue
        a, b = stock.get("bench") or {}, row.get("bench") or {}
        if "ms_rounds" in a and "ms_rounds" in b:
            same = stock["compile"].get("binary") == row["compile"].get("binary")
            out.append((a["ms_rounds"], b["ms_rounds"], same))
    return out


def main() -> None:
    places: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for run in sorted(RUN.glob("r*/results.json")):
        found = pairs(run)
        full = geomean([statistics.median(a) / statistics.median(b) for a, b, _ in found])
        even = geomean([statistics.median(a[:6]) / statistics.median(b[:6]) for a, b, _ in found])
        print(f"{run.parent.name}: n={len(found)}, all rounds {full:.4f}, first six {even:.4f}")
        for a, b, same in found:
            if not same:
                for k, (x, y) in enumerate(zip(a, b, strict=True)):
                    places[k % 3].append(x / y)
    for k, ratios in places.items():
        print(f"order {ORDERS[k]}: n={len(ratios)} rounds, stock/optimal {geomean(ratios):.4f}")


if __name__ == "__main__":
    main()

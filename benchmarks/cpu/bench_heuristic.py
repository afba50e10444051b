"""Wall time of the heuristic per corpus loop (median of 5 runs).

    python -m benchmarks.cpu.bench_heuristic [--runs 5] [--budget-ms 20] [--json OUT]

"cold" clears the per-graph caches (cost table, rule facts) before each run, so it includes
building the cost table; "warm" reuses them (what a second call on the same loop costs).
Parsing the TTGIR and building the loop graph are not timed. Exit status 1 when the slowest
cold median exceeds the budget.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from ws_solver import ir
from ws_solver.heuristic import decide
from ws_solver.heuristic import facts as seed_facts
from ws_solver.model import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.target import target_for

ROOT = Path(__file__).resolve().parents[2]


def clear_caches() -> None:
    for cached in (getattr(cost_table, "_cost_table_cached", None), seed_facts._facts):
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def time_ms(fn, runs: int, cold: bool) -> float:
    samples = []
    for _ in range(runs):
        if cold:
            clear_caches()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget-ms", type=float, default=20.0)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus" / "ttgir")
    args = parser.parse_args(argv)

    rows = []
    for path in sorted(args.corpus.glob("*.ttgir")):
        for graph in build_graphs(ir.parse(path.read_text())):
            target = target_for(graph.target)
            decide(graph, target)  # warm up imports and code paths

            def run(graph=graph, target=target):
                return decide(graph, target)

            cold = time_ms(run, args.runs, cold=True)
            warm = time_ms(run, args.runs, cold=False)
            plan, reason = decide(graph, target)
            rows.append(
                {
                    "file": path.name,
                    "loop": graph.loop_index,
                    "nodes": len(graph.nodes),
                    "partitions": len(plan.partitions),
                    "cold_ms": round(cold, 3),
                    "warm_ms": round(warm, 3),
                    "reason": reason,
                }
            )

    width = max(len(r["file"]) for r in rows)
    print(f"{'file':<{width}}  loop  nodes  parts  cold ms  warm ms")
    for r in rows:
        print(
            f"{r['file']:<{width}}  {r['loop']:>4}  {r['nodes']:>5}  {r['partitions']:>5}"
            f"  {r['cold_ms']:>7.2f}  {r['warm_ms']:>7.2f}"
        )
    worst = max(rows, key=lambda r: r["cold_ms"])
    print(
        f"\n{len(rows)} loops, median of {args.runs} runs each. "
        f"max cold {worst['cold_ms']:.2f} ms ({worst['file']} loop {worst['loop']}), "
        f"max warm {max(r['warm_ms'] for r in rows):.2f} ms, "
        f"median cold {statistics.median(r['cold_ms'] for r in rows):.2f} ms; "
        f"budget {args.budget_ms:g} ms per loop"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if worst["cold_ms"] <= args.budget_ms else 1


if __name__ == "__main__":
    sys.exit(main())

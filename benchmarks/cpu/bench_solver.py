"""The exact partitioner over the corpus: heuristic vs optimal, proof status, wall time.

    python -m benchmarks.cpu.bench_solver [--time-limit 10] [--runs 3] [--workers 2]
        [--out benchmarks/results/DATE-solver] [--corpus corpus/ttgir]

Per loop: op count, the heuristic's objective and II (the hint), the solver's objective,
II, best bound, status, and the median wall time of `solve` over --runs runs (the plan must
be byte-identical across runs). Parsing, graph building and the heuristic are not timed.
Writes results.md, results.json and manifest.json into the run folder --out (default:
benchmarks/results/<date>-solver; the archive's format, benchmarks/results/README.md); exit
status 1 if any plan is invalid, worse than its hint, or differs between runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

import ortools

from benchmarks.common import archive
from ws_solver import ir
from ws_solver.core.options import DEFAULT_TIME_LIMIT, SolverBudget
from ws_solver.encode import solve
from ws_solver.heuristic import partition
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate
from ws_solver.model.dfg import build_graphs
from ws_solver.model.kinds import NodeRole
from ws_solver.model.target import target_for

ROOT = Path(__file__).resolve().parents[2]

# Targets the brief sets for the solver.
TARGET_OPTIMAL_SHARE = 0.90
TARGET_P95_S = 1.0


def git_revision() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git(
        "status",
        "--porcelain",
        "--",
        "ws_solver/encode",
        "ws_solver/model",
        "ws_solver/heuristic",
        "benchmarks/cpu/bench_solver.py",
    )
    return rev + ("+dirty" if dirty else "")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def roles(plan) -> str:
    """Partition roles in id order, e.g. "compute/compute/mma/load"; "-" unspecialized."""
    return "/".join(p.role for p in plan.partitions) if plan.specialized else "-"


def bench_loop(path: Path, graph, args) -> dict:
    target = target_for(graph.target)
    hint = partition(graph, target)
    hint_cost = evaluate(hint, graph, target)
    results = [
        solve(graph, target, hint=hint, budget=SolverBudget(args.time_limit, workers=args.workers))
        for _ in range(args.runs)
    ]
    first = results[0]
    problems = check_plan(first.plan, graph, target)
    return {
        "file": path.name,
        "loop": graph.name,
        "target": target.name,
        "ops": sum(1 for n in graph.nodes if n.role == NodeRole.OP),
        "nodes": len(graph.nodes),
        "heuristic_objective": hint_cost.objective,
        "heuristic_ii": hint_cost.ii,
        "heuristic_partitions": len(hint.partitions),
        "heuristic_roles": roles(hint),
        "objective": first.objective,
        "ii": first.ii,
        "bound": first.bound,
        "gap": first.gap,
        "status": first.status,
        "partitions": len(first.plan.partitions),
        "roles": roles(first.plan),
        "channels": len(first.plan.channels),
        "wall_s": statistics.median(r.wall_s for r in results),
        "wall_s_runs": [round(r.wall_s, 4) for r in results],
        "deterministic_time": first.deterministic_time,
        "note": first.note,
        "valid": not problems,
        "never_worse": first.objective is not None and first.objective <= hint_cost.objective,
        "deterministic": len({r.plan.to_json() for r in results}) == 1,
    }


def summarize(rows: list[dict], time_limit: float) -> dict:
    walls = [r["wall_s"] for r in rows]
    optimal = [r for r in rows if r["status"] == "OPTIMAL" and r["wall_s"] <= time_limit]
    gains = [(r["heuristic_ii"] - r["ii"]) / r["heuristic_ii"] for r in rows if r["ii"]]
    return {
        "loops": len(rows),
        "proven_optimal": len(optimal),
        "proven_optimal_share": len(optimal) / len(rows),
        "p50_wall_s": statistics.median(walls),
        "p95_wall_s": percentile(walls, 95),
        "max_wall_s": max(walls),
        "p50_deterministic_time": statistics.median(r["deterministic_time"] for r in rows),
        "p95_deterministic_time": percentile([r["deterministic_time"] for r in rows], 95),
        "mean_ii_improvement": statistics.mean(gains),
        "loops_with_lower_ii": sum(1 for r in rows if r["ii"] < r["heuristic_ii"]),
        "all_valid": all(r["valid"] for r in rows),
        "all_never_worse": all(r["never_worse"] for r in rows),
        "all_deterministic": all(r["deterministic"] for r in rows),
    }


def markdown(meta: dict, summary: dict, rows: list[dict]) -> str:
    s = summary
    lines = [
        f"# Exact partitioner (CP-SAT) over the corpus — {meta['date']}",
        "",
        f"- machine: {meta['machine']}",
        f"- load average before / after: {meta['load_before']} / {meta['load_after']}",
        f"- OR-Tools {meta['ortools']}, Python {meta['python']}, git {meta['git']}",
        f"- solve(time_limit={meta['time_limit']} deterministic s, workers={meta['workers']},"
        f" seed 0), hint = heuristic seed; wall = median of {meta['runs']} runs",
        "",
        "## Summary",
        "",
        "| metric | value | target |",
        "|---|---|---|",
        f"| loops | {s['loops']} | |",
        f"| proven optimal within {meta['time_limit']:g} s | {s['proven_optimal']} "
        f"({s['proven_optimal_share']:.0%}) | >= {TARGET_OPTIMAL_SHARE:.0%} |",
        f"| wall p50 / p95 / max | {s['p50_wall_s']:.3f} / {s['p95_wall_s']:.3f} / "
        f"{s['max_wall_s']:.3f} s | p95 <= {TARGET_P95_S:g} s |",
        f"| deterministic time p50 / p95 | {s['p50_deterministic_time']:.3f} / "
        f"{s['p95_deterministic_time']:.3f} | |",
        f"| mean II improvement over the heuristic | {s['mean_ii_improvement']:.1%} "
        f"({s['loops_with_lower_ii']} loops lower) | |",
        f"| plans valid / never worse than hint / deterministic | {s['all_valid']} / "
        f"{s['all_never_worse']} / {s['all_deterministic']} | all True |",
        "",
        "## Per loop",
        "",
        "Partitions by role in id order (partition 0 is Triton's default region); "
        "`-`: not specialized.",
        "",
        "| file | loop | ops | heuristic II (partitions) | optimal II (partitions, channels) "
        "| objective | bound | status | wall s | dtime |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['file'].removesuffix('.ttgir')} | {r['loop'].split('#')[1]} | {r['ops']} "
            f"| {r['heuristic_ii']} ({r['heuristic_roles']}) "
            f"| {r['ii']} ({r['roles']}, {r['channels']}) | {r['objective']} "
            f"| {r['bound']} | {r['status']} | {r['wall_s']:.3f} "
            f"| {r['deterministic_time']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, help="run folder (default: benchmarks/results/DATE-solver)"
    )
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus" / "ttgir")
    args = parser.parse_args(argv)

    load_before = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for path in sorted(args.corpus.glob("*.ttgir")):
        for graph in build_graphs(ir.parse(path.read_text())):
            row = bench_loop(path, graph, args)
            rows.append(row)
            print(
                f"{row['file']:55s} {row['loop'].split('#')[1]:6s} {row['status']:9s} "
                f"II {row['heuristic_ii']:5d} -> {row['ii']:5d}  {row['wall_s']:.3f} s",
                flush=True,
            )
    summary = summarize(rows, args.time_limit)
    today = datetime.date.today().isoformat()
    meta = {
        "date": today,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores ({platform.platform()})",
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "ortools": ortools.__version__,
        "python": platform.python_version(),
        "git": git_revision(),
        "time_limit": args.time_limit,
        "workers": args.workers,
        "runs": args.runs,
    }
    out = args.out or archive.RESULTS / f"{today}-solver"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(markdown(meta, summary, rows))
    payload = {"meta": meta, "summary": summary, "loops": rows}
    (out / "results.json").write_text(json.dumps(payload, indent=1) + "\n")
    command = "python -m benchmarks.cpu.bench_solver " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    archive.write_manifest(out, __doc__.splitlines()[0], command, meta["git"], today)
    print(json.dumps(summary, indent=1))
    ok = summary["all_valid"] and summary["all_never_worse"] and summary["all_deterministic"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

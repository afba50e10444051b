"""The plan sweep: every plan the cost model ranks near the top, compiled, verified and timed.

    python benchmarks/sweep_plans.py run --out DIR [--ranks 6] [--kernels a,b] [--configs s]
    python benchmarks/sweep_plans.py run --dry-run ...     # CPU: compile everything for sm_90
    python benchmarks/sweep_plans.py analyze DIR/results.json [...] --out DIR2

``run`` compiles, for every sm_90 corpus config, the variants of ``benchmarks/variants.py``
(``explore:0`` .. ``explore:R-1``, the drop-in's knobs flipped, num_stages one either side)
beside ``none``, ``heuristic``, ``optimal`` and ``triton``, each in its own Triton cache, many
at once; then ``bench_kernels`` verifies every distinct binary (3 seeds, NaN-poisoned outputs,
10 bitwise repeats) and times the verified ones in interleaved rounds.

``analyze`` turns one or more runs into the dataset (one row per distinct binary of a config:
the variants that built it, each loop's plan and cost-model terms, median time and spread over
the rounds, the cubin hash) and a headroom table per config: the best measured binary against
the heuristic, the optimum, ``none`` and ``triton``. Two binaries whose medians are closer than
both spreads (or 2%) are a tie.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import variants  # noqa: E402

BASE = ("none", "heuristic", "optimal", "triton")
NOISE = 0.02  # below this relative difference two timings are a tie (gpu-benchmarking.md)
SCHEMA = "ws-solver.plan-sweep"


def strategies(ranks: int) -> list[str]:
    return [*BASE, *(v.name for v in variants.sweep(ranks))]


def run(args: argparse.Namespace) -> int:
    from benchmarks import bench_kernels

    argv = ["--strategies", ",".join(strategies(args.ranks)), "--out", str(args.out)]
    argv += ["--rounds", str(args.rounds), "--kernels", args.kernels, "--configs", args.configs]
    if args.dry_run:
        argv.append("--dry-run")
    if args.parallel:
        argv += ["--parallel", str(args.parallel)]
    if args.cache_root:
        argv += ["--cache-root", str(args.cache_root)]
    if args.sustain:
        argv += ["--sustain", str(args.sustain), "--sustain-configs", args.sustain_configs]
    bench_kernels.main(argv)  # non-zero when a variant fails: that is data here, not an error
    return 0


# -- analysis ------------------------------------------------------------------------------------
def load_rows(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        payload = json.loads(path.read_text())
        revision = payload.get("environment", {}).get("git_revision", "")
        for row in payload["results"]:
            rows.append({**row, "run": path.parent.name, "revision": revision})
    return rows


def loop_features(row: dict) -> list[dict]:
    """Per WS loop: the plan's shape and the cost model's terms, as the drop-in reported."""
    out = []
    for loop in (row.get("compile") or {}).get("dropin", {}).get("loops") or []:
        plan = loop.get("plan") or {}
        cost = loop.get("cost") or {}
        parts = plan.get("partitions") or []
        out.append(
            {
                "loop": loop.get("loop"),
                "specialized": loop.get("specialized"),
                "ii": loop.get("ii"),
                "objective": loop.get("objective"),
                "rank": loop.get("rank"),
                "partitions": len(parts),
                "warps": [p.get("warps") for p in parts],
                "registers": [p.get("registers") for p in parts],
                "channels": cost.get("channels"),
                "channel_bytes": cost.get("channel_bytes"),
                "bound_by": cost.get("bound_by"),
                "units": cost.get("units"),
                "partition_busy": cost.get("partition_busy"),
                "recurrence": cost.get("recurrence"),
                "channel_latency": cost.get("channel_latency"),
                "shared_memory": cost.get("shared_memory"),
                "register_file": cost.get("register_file"),
                "assignment": plan.get("assignment"),
            }
        )
    return out


def spread(times: list[float]) -> float:
    """(max - min) / median of a binary's rounds."""
    med = statistics.median(times)
    return (max(times) - min(times)) / med if med else 0.0


def dataset(rows: list[dict]) -> list[dict]:
    """One record per distinct binary of each (kernel, config) that verified and was timed."""
    groups: dict[tuple[str, str, str], dict] = {}
    for row in rows:
        bench = row.get("bench") or {}
        binary = (row.get("compile") or {}).get("binary")
        if not binary or not bench.get("ms_rounds") or not (row.get("verify") or {}).get("passed"):
            continue
        key = (row["kernel"], row["config"], binary)
        record = groups.get(key)
        if record is None:
            times = list(bench["ms_rounds"])
            record = groups[key] = {
                "kernel": row["kernel"],
                "family": family(row["kernel"], row["config"]),
                "config": row["config"],
                "binary": binary,
                "variants": [],
                "ms": statistics.median(times),
                "ms_rounds": times,
                "spread": spread(times),
                "rate": bench.get("rate"),
                "ratio_to_vendor": bench.get("ratio_to_vendor"),
                "n_regs": (row.get("compile") or {}).get("n_regs"),
                "n_spills": (row.get("compile") or {}).get("n_spills"),
                "warp_specialize_ops": (row.get("compile") or {}).get("warp_specialize_ops"),
                "loops": loop_features(row),
                "run": row.get("run"),
                "revision": row.get("revision"),
            }
        record["variants"].append(row["strategy"])
    return sorted(groups.values(), key=lambda r: (r["kernel"], r["config"], r["ms"]))


def family(kernel: str, config: str) -> str:
    """Kernel families for leave-one-family-out checks: attention splits by causality."""
    if kernel == "attention_fwd":
        return "attention_fwd_causal" if config.startswith("causal") else "attention_fwd"
    return kernel


def tie(a: dict, b: dict) -> bool:
    """Whether two binaries' medians are within the larger spread (at least NOISE)."""
    limit = max(NOISE, a["spread"], b["spread"])
    return abs(a["ms"] - b["ms"]) / min(a["ms"], b["ms"]) <= limit


def headroom(records: list[dict], rows: list[dict]) -> list[dict]:
    """Per config: the best binary and how heuristic, optimal, none and triton compare."""
    out = []
    configs = sorted({(r["kernel"], r["config"]) for r in records})
    for kernel, config in configs:
        mine = [r for r in records if r["kernel"] == kernel and r["config"] == config]
        best = min(mine, key=lambda r: r["ms"])
        entry: dict = {
            "kernel": kernel,
            "config": config,
            "binaries": len(mine),
            "best": best["variants"],
            "best_ms": best["ms"],
            "best_spread": best["spread"],
        }
        for name in BASE:
            found = next((r for r in mine if name in r["variants"]), None)
            entry[name] = (
                None
                if found is None
                else {
                    "ms": found["ms"],
                    "slowdown": found["ms"] / best["ms"] - 1,
                    "tie_with_best": tie(found, best),
                    "binary": found["binary"],
                }
            )
        failed = [
            r["strategy"]
            for r in rows
            if r["kernel"] == kernel
            and r["config"] == config
            and not (r.get("verify") or {}).get("passed")
        ]
        entry["not_verified"] = failed
        out.append(entry)
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def headroom_markdown(table: list[dict]) -> str:
    lines = [
        "| kernel | config | distinct binaries | best (variants) | best ms | spread |"
        " heuristic | optimal | none | triton | did not compile or verify |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in table:
        cells = []
        for name in BASE:
            v = e[name]
            cells.append(
                "-"
                if v is None
                else f"{_pct(v['slowdown'])}{' (tie)' if v['tie_with_best'] and v['slowdown'] else ''}"
            )
        best = ", ".join(e["best"][:4]) + (" …" if len(e["best"]) > 4 else "")
        lines.append(
            f"| {e['kernel']} | {e['config']} | {e['binaries']} | {best} | {e['best_ms']:.3f} |"
            f" {100 * e['best_spread']:.1f}% | {' | '.join(cells)} |"
            f" {', '.join(e['not_verified']) or '-'} |"
        )
    return "\n".join(lines) + "\n"


def analyze(args: argparse.Namespace) -> int:
    rows = load_rows(args.results)
    records = dataset(rows)
    table = headroom(records, rows)
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"schema": SCHEMA, "version": 1, "records": records, "headroom": table}
    (args.out / "dataset.json").write_text(json.dumps(payload, indent=1, sort_keys=True))
    (args.out / "headroom.md").write_text(headroom_markdown(table))
    print(headroom_markdown(table))
    print(f"{len(records)} distinct binaries over {len(table)} configs -> {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="compile, verify and time the sweep (GPU; --dry-run: CPU)")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--ranks", type=int, default=6, help="explore:0 .. explore:RANKS-1")
    r.add_argument("--kernels", default="", help="comma-separated (default: all)")
    r.add_argument("--configs", default="", help="only configs whose name contains this")
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--parallel", type=int, default=0)
    r.add_argument("--cache-root", type=Path, default=None)
    r.add_argument("--sustain", type=float, default=0.0, metavar="SECONDS")
    r.add_argument("--sustain-configs", default="", metavar="SUBSTRING")
    r.add_argument("--dry-run", action="store_true")
    a = sub.add_parser("analyze", help="dataset and headroom table from run results")
    a.add_argument("results", type=Path, nargs="+", help="results.json of one or more runs")
    a.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "run":
        if not args.kernels:
            from corpus import kernels as corpus_kernels

            args.kernels = ",".join(corpus_kernels.KERNEL_MODULES)
        return run(args)
    return analyze(args)


if __name__ == "__main__":
    sys.exit(main())

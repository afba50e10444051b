"""The plan sweep: every plan the cost model ranks near the top, compiled, verified and timed.

    python -m benchmarks.gpu.sweep_plans run --out DIR [--ranks 6] [--kernels a,b] [--configs s]
    python -m benchmarks.gpu.sweep_plans run --dry-run ...     # CPU: compile everything for sm_90
    python -m benchmarks.gpu.sweep_plans run --backend ray [--ray-address ADDR] ...  # a cluster
    python -m benchmarks.gpu.sweep_plans analyze DIR/results.json [...] --out DIR2

``run`` compiles, for every sm_90 corpus config, the variants of ``benchmarks/common/variants.py``
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

from benchmarks.common import variants
from benchmarks.common.stats import spread, tie
from benchmarks.common.variants import is_plan_only

REPO_ROOT = Path(__file__).resolve().parents[2]

BASE = ("none", "heuristic", "optimal", "triton")
SCHEMA = "ws-solver.plan-sweep"


def strategies(ranks: int) -> list[str]:
    return [*BASE, *(v.name for v in variants.sweep(ranks))]


def run(args: argparse.Namespace) -> int:
    from benchmarks.gpu import bench_kernels

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
    if args.backend == "local" and not args.ray_address:
        bench_kernels.main(argv)  # non-zero when a variant fails: that is data here
        return 0
    from benchmarks.gpu import sweep_backend
    from ws_solver.backends import BackendError

    try:
        with sweep_backend.distributed(args.backend, args.ray_address, args.retries) as where:
            bench_kernels.main(argv, where)
    except BackendError as e:
        print(f"sweep_plans: {e}", file=sys.stderr)
        return 2
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


def headroom(records: list[dict], rows: list[dict]) -> list[dict]:
    """Per config: the best binary, the best one that differs only in its plan, and how
    none, heuristic, optimal and triton compare with the best."""
    out = []
    configs = sorted({(r["kernel"], r["config"]) for r in records})
    for kernel, config in configs:
        mine = [r for r in records if r["kernel"] == kernel and r["config"] == config]
        best = min(mine, key=lambda r: r["ms"])
        plans = [r for r in mine if any(is_plan_only(v) and v != "triton" for v in r["variants"])]
        best_plan = min(plans, key=lambda r: r["ms"])
        entry: dict = {
            "kernel": kernel,
            "config": config,
            "binaries": len(mine),
            "plan_binaries": len(plans),
            "best": best["variants"],
            "best_ms": best["ms"],
            "best_spread": best["spread"],
            "best_plan": [v for v in best_plan["variants"] if is_plan_only(v)],
            "best_plan_ms": best_plan["ms"],
        }
        for name in BASE:
            found = next((r for r in mine if name in r["variants"]), None)
            entry[name] = None if found is None else compared(found, best, best_plan)
        entry["not_verified"] = [
            r["strategy"]
            for r in rows
            if r["kernel"] == kernel
            and r["config"] == config
            and not (r.get("verify") or {}).get("passed")
        ]
        out.append(entry)
    return out


def compared(found: dict, best: dict, best_plan: dict) -> dict:
    return {
        "ms": found["ms"],
        "binary": found["binary"],
        "slowdown": found["ms"] / best["ms"] - 1,
        "tie_with_best": tie(found, best),
        "plan_slowdown": found["ms"] / best_plan["ms"] - 1,
        "tie_with_best_plan": tie(found, best_plan),
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def _cell(v: dict | None, key: str) -> str:
    if v is None:
        return "-"
    tied = v[f"tie_with_{key}"] and v[f"{'plan_' if key == 'best_plan' else ''}slowdown"]
    value = v["plan_slowdown"] if key == "best_plan" else v["slowdown"]
    return _pct(value) + (" (tie)" if tied else "")


def _names(names: list[str]) -> str:
    return ", ".join(names[:3]) + (" …" if len(names) > 3 else "")


def headroom_markdown(table: list[dict]) -> str:
    """Two tables: against the best plan at the default knobs, and against the best of all."""
    head = " | ".join(BASE)
    lines = [
        "### Against the best plan (default knobs and num_stages)",
        "",
        f"| kernel | config | plan binaries | best plan | ms | {head} |",
        "|---|---|---|---|---|" + "---|" * len(BASE),
    ]
    for e in table:
        cells = " | ".join(_cell(e[name], "best_plan") for name in BASE)
        lines.append(
            f"| {e['kernel']} | {e['config']} | {e['plan_binaries']} | {_names(e['best_plan'])}"
            f" | {e['best_plan_ms']:.3f} | {cells} |"
        )
    lines += [
        "",
        "### Against the best binary of the sweep (knobs and num_stages included)",
        "",
        f"| kernel | config | binaries | best | ms | spread | {head} | not verified |",
        "|---|---|---|---|---|---|" + "---|" * len(BASE) + "---|",
    ]
    for e in table:
        cells = " | ".join(_cell(e[name], "best") for name in BASE)
        lines.append(
            f"| {e['kernel']} | {e['config']} | {e['binaries']} | {_names(e['best'])} |"
            f" {e['best_ms']:.3f} | {100 * e['best_spread']:.1f}% | {cells} |"
            f" {', '.join(e['not_verified']) or '-'} |"
        )
    return "\n".join(lines) + "\n"


# Each change alone against the heuristic's plan at the drop-in's defaults, same run.
ATTRIBUTION = (
    ("not specialized", "none"),  # the decision to specialize, undone
    ("wgmma waits not sunk", "heuristic~ov0"),
    ("partition-wide release", "heuristic~wg0"),
    ("warp-group turns", "heuristic~tt1"),
    ("num_stages - 1", "heuristic~s-1"),
    ("num_stages + 1", "heuristic~s+1"),
    ("best other plan", None),  # the fastest plan-only binary other than the heuristic's
)


def attribution(records: list[dict]) -> list[dict]:
    """Per config: the time of each change alone relative to the heuristic's binary
    (positive: slower), and whether it is within noise."""
    out = []
    for kernel, config in sorted({(r["kernel"], r["config"]) for r in records}):
        mine = [r for r in records if r["kernel"] == kernel and r["config"] == config]
        base = next((r for r in mine if "heuristic" in r["variants"]), None)
        if base is None:
            continue
        entry: dict = {"kernel": kernel, "config": config, "heuristic_ms": base["ms"]}
        for label, variant in ATTRIBUTION:
            if variant is None:
                others = [
                    r
                    for r in mine
                    if r is not base
                    and any(is_plan_only(v) and v not in ("triton", "none") for v in r["variants"])
                ]
                found = min(others, key=lambda r: r["ms"], default=None)
            else:
                found = next((r for r in mine if variant in r["variants"]), None)
            entry[label] = (
                None
                if found is None
                else {
                    "relative": found["ms"] / base["ms"] - 1,
                    "tie": tie(found, base),
                    "same_binary": found is base,
                    "variants": found["variants"],
                }
            )
        out.append(entry)
    return out


def attribution_markdown(table: list[dict]) -> str:
    labels = [label for label, _ in ATTRIBUTION]
    lines = [
        "Each change alone, relative to the heuristic's binary at the drop-in's defaults "
        "(negative: faster; `=`: the same binary; `~`: within noise):",
        "",
        f"| kernel | config | heuristic ms | {' | '.join(labels)} |",
        "|---|---|---|" + "---|" * len(labels),
    ]
    for e in table:
        cells = []
        for label in labels:
            v = e[label]
            if v is None:
                cells.append("-")
            elif v["same_binary"]:
                cells.append("=")
            else:
                cells.append(_pct(v["relative"]) + (" ~" if v["tie"] else ""))
        lines.append(
            f"| {e['kernel']} | {e['config']} | {e['heuristic_ms']:.3f} | {' | '.join(cells)} |"
        )
    return "\n".join(lines) + "\n"


def analyze(args: argparse.Namespace) -> int:
    rows = load_rows(args.results)
    records = dataset(rows)
    table = headroom(records, rows)
    causes = attribution(records)
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {
        "schema": SCHEMA,
        "version": 1,
        "records": records,
        "headroom": table,
        "attribution": causes,
    }
    (args.out / "dataset.json").write_text(json.dumps(payload, indent=1, sort_keys=True))
    text = headroom_markdown(table) + "\n### Attribution\n\n" + attribution_markdown(causes)
    (args.out / "headroom.md").write_text(text)
    print(text)
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
    r.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="ray: compiles as CPU tasks and each config's timing as a task with one GPU, "
        "over the cluster (needs pip install 'ws-solver[ray]')",
    )
    r.add_argument("--ray-address", default=None, metavar="ADDR")
    r.add_argument("--retries", type=int, default=2, metavar="N")
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

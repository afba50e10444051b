"""How well the cost model ranks the plans of the sweep, and the margin `optimal` needs.

    python -m benchmarks.analysis.fit_sweep benchmarks/results/2026-12-01-plan-sweep/dataset.json \
        --rules-today corpus/ttgir --check benchmarks/results/2026-12-01-tune/tune-*.json

Works on the distinct binaries of each config that differ only in their plan (default knobs
and num_stages; ``variants.is_plan_only``), since the model prices plans, not knobs:

- Spearman of modeled II (summed over a kernel's loops) against the measured median, per
  config, with n and the number of tied II values; no normalization, no pooled points;
- pairwise agreement: over pairs of binaries whose measured times differ beyond noise
  (``stats.tie``), how often the lower modeled II is the faster binary;
- the model's error on pairs: |measured relative difference - modeled relative difference|;
- the departure margin for `optimal` (ws_solver/model/decision.py), fitted as the 90th
  percentile of that error over all families but one and checked on the family left out:
  would the rule (keep the heuristic's plan unless the modeled gain exceeds the margin) have
  ended within noise of the best plan of the held-out family's configs?
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from pathlib import Path

from benchmarks.common.stats import NOISE, spearman, spread, tie
from benchmarks.common.variants import is_plan_only

REPO_ROOT = Path(__file__).resolve().parents[2]

QUANTILE = 0.9


def modeled_ii(record: dict) -> int | None:
    iis = [loop.get("ii") for loop in record["loops"]]
    return sum(iis) if iis and all(isinstance(i, int) for i in iis) else None


def plan_binaries(
    records: list[dict], allowed=lambda record: True
) -> dict[tuple[str, str], list[dict]]:
    """(kernel, config) -> its plan-only binaries with a modeled II that `allowed` keeps."""
    out: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        plan_only = any(is_plan_only(v) and v != "triton" for v in r["variants"])
        if plan_only and modeled_ii(r) and allowed(r):
            out.setdefault((r["kernel"], r["config"]), []).append(r)
    return out


def lowering_today(corpus: Path):
    """A filter keeping the records whose plans today's lowering rules still allow (plans
    of the corpus TTGIR, read from `corpus`): the model's error on plans it can still pick.
    Records whose loops carry no assignment (Triton's own plans) are kept."""
    from ws_solver import ir
    from ws_solver.model.dfg import build_graphs
    from ws_solver.model.lowering import lowering_rules, lowering_violations
    from ws_solver.model.plan import Partition, Plan
    from ws_solver.model.target import target_for

    graphs: dict[tuple[str, str], list] = {}
    target = target_for("sm_90")

    def allowed(record: dict) -> bool:
        key = (record["kernel"], record["config"])
        if key not in graphs:
            text = (corpus / f"{key[0]}.{key[1]}.sm90.ttgir").read_text()
            graphs[key] = build_graphs(ir.parse(text))
        for graph, loop in zip(graphs[key], record["loops"], strict=False):
            if not loop.get("assignment"):
                continue
            parts = tuple(Partition(i, 4, 24, 0) for i in range(loop["partitions"] or 1))
            assignment = tuple(tuple(a) for a in loop["assignment"])
            plan = Plan(graph.name, target.name, assignment, parts, ())
            if lowering_violations(graph, plan, lowering_rules(graph, target)):
                return False
        return True

    return allowed


def pair_errors(group: list[dict]) -> list[dict]:
    """Every pair of a config's binaries: measured and modeled relative differences."""
    out = []
    for a, b in itertools.combinations(group, 2):
        ia, ib = modeled_ii(a), modeled_ii(b)
        measured = b["ms"] / a["ms"] - 1
        modeled = ib / ia - 1
        out.append(
            {
                "measured": measured,
                "modeled": modeled,
                "error": abs(measured - modeled),
                "beyond_noise": not tie(a, b),
                "agree": (measured > 0) == (modeled > 0) if modeled else None,
            }
        )
    return out


def quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rule_outcome(group: list[dict], margin: float) -> dict:
    """The plan the rule keeps (heuristic unless the optimum's modeled gain > margin), and
    whether it is within noise of the best plan measured."""
    heuristic = next(r for r in group if "heuristic" in r["variants"])
    optimum = next((r for r in group if "explore:0" in r["variants"]), heuristic)
    gain = 1 - modeled_ii(optimum) / modeled_ii(heuristic)
    chosen = optimum if gain > margin else heuristic
    best = min(group, key=lambda r: r["ms"])
    label = "optimum" if chosen is optimum else "heuristic"
    label = "same plan" if optimum is heuristic else label
    return {
        "modeled_gain": gain,
        "chose": label,
        "slowdown": chosen["ms"] / best["ms"] - 1,
        "within_noise": tie(chosen, best),
    }


def report(records: list[dict], allowed=lambda record: True) -> dict:
    groups = plan_binaries(records, allowed)
    per_config = []
    for (kernel, config), group in sorted(groups.items()):
        iis = [modeled_ii(r) for r in group]
        rho = spearman(iis, [r["ms"] for r in group]) if len(group) >= 3 else None
        per_config.append(
            {
                "kernel": kernel,
                "config": config,
                "family": group[0]["family"],
                "n": len(group),
                "distinct_ii": len(set(iis)),
                "spearman": rho,
                "pairs": pair_errors(group),
            }
        )
    pairs = [p for c in per_config for p in c["pairs"]]
    decided = [p for p in pairs if p["beyond_noise"] and p["agree"] is not None]
    families = sorted({c["family"] for c in per_config})
    held_out = []
    for family in families:
        train = [p["error"] for c in per_config if c["family"] != family for p in c["pairs"]]
        margin = quantile(train, QUANTILE)
        for (_, _), group in sorted(groups.items()):
            if group[0]["family"] != family or not any("heuristic" in r["variants"] for r in group):
                continue
            held_out.append(
                {"family": family, "config": group[0]["config"], "margin": margin}
                | rule_outcome(group, margin)
            )
    return {
        "configs": len(per_config),
        "binaries": sum(c["n"] for c in per_config),
        "per_config": [{k: v for k, v in c.items() if k != "pairs"} for c in per_config],
        "pairs": len(pairs),
        "pairs_beyond_noise": len([p for p in pairs if p["beyond_noise"]]),
        "pairs_beyond_noise_with_ii_difference": len(decided),
        "pairs_ordered_right": len([p for p in decided if p["agree"]]),
        "error_median": statistics.median(p["error"] for p in pairs) if pairs else None,
        "error_p90": quantile([p["error"] for p in pairs], QUANTILE),
        "margin_all_families": quantile([p["error"] for p in pairs], QUANTILE),
        "leave_one_family_out": held_out,
        "noise": NOISE,
    }


def remeasured(records: list[dict], tune_runs: list[dict]) -> list[dict]:
    """The records whose cubins a later run (`ws-solver tune`'s JSON) timed again, with that
    run's recheck median and spread: the same binaries, so the same modeled II, measured
    anew (an out-of-sample check of what was fitted on the sweep)."""
    times: dict[tuple[str, str, str], list[float]] = {}
    for run in tune_runs:
        for result in run["results"]:
            rounds = result.get("recheck_rounds_ms") or {}
            for cand in result["candidates"]:
                name = cand["name"] if cand.get("same_as") is None else cand["same_as"]
                if cand.get("binary") and rounds.get(name):
                    key = (result["kernel"], result["config"], cand["binary"])
                    times.setdefault(key, rounds[name])
    out = []
    for r in records:
        found = times.get((r["kernel"], r["config"], r["binary"]))
        if found:
            out.append(r | {"ms": statistics.median(found), "spread": spread(found)})
    return out


def out_of_sample(records: list[dict], margin: float, allowed) -> dict:
    """The model's pair errors on re-measured binaries, against the margin fitted before."""
    groups = plan_binaries(records, allowed)
    pairs = [p for group in groups.values() for p in pair_errors(group)]
    decided = [p for p in pairs if p["beyond_noise"] and p["agree"] is not None]
    return {
        "binaries": sum(len(g) for g in groups.values()),
        "pairs": len(pairs),
        "error_median": statistics.median(p["error"] for p in pairs) if pairs else None,
        "error_p90": quantile([p["error"] for p in pairs], QUANTILE),
        "share_within_margin": (
            sum(p["error"] <= margin for p in pairs) / len(pairs) if pairs else None
        ),
        "pairs_beyond_noise_with_ii_difference": len(decided),
        "pairs_ordered_right": len([p for p in decided if p["agree"]]),
        "margin": margin,
        "spearman": {
            f"{kernel}.{config}": {
                "n": len(group),
                "distinct_ii": len({modeled_ii(r) for r in group}),
                "rho": spearman([modeled_ii(r) for r in group], [r["ms"] for r in group]),
            }
            for (kernel, config), group in sorted(groups.items())
            if len(group) >= 3
        },
    }


def text(r: dict) -> str:
    lines = [
        f"plan-only distinct binaries: {r['binaries']} in {r['configs']} configs",
        "",
        "per config (Spearman of modeled II vs measured median; None: fewer than 3 binaries "
        "or every II tied):",
    ]
    for c in r["per_config"]:
        rho = "-" if c["spearman"] is None else f"{c['spearman']:+.2f}"
        lines.append(
            f"  {c['kernel']:<16} {c['config']:<34} n={c['n']:<2} distinct II={c['distinct_ii']:<2}"
            f" rho={rho}"
        )
    lines += [
        "",
        f"pairs of binaries: {r['pairs']}; measured apart beyond noise: "
        f"{r['pairs_beyond_noise']}; of those with different modeled II: "
        f"{r['pairs_beyond_noise_with_ii_difference']}, ordered right: "
        f"{r['pairs_ordered_right']}",
        f"model error on pairs |measured - modeled| relative difference: median "
        f"{r['error_median']:.3f}, p90 {r['error_p90']:.3f}",
        f"departure margin fitted on all families (p90): {r['margin_all_families']:.3f}",
        "",
        "leave one family out (margin fitted without the family, rule applied to it):",
    ]
    for h in r["leave_one_family_out"]:
        lines.append(
            f"  {h['family']:<22} {h['config']:<34} margin {h['margin']:.3f} modeled gain "
            f"{h['modeled_gain']:+.4f} -> {h['chose']:<9} {100 * h['slowdown']:+.1f}% of best"
            f" ({'within noise' if h['within_noise'] else 'SLOWER beyond noise'})"
        )
    check = r.get("out_of_sample")
    if check:
        lines += [
            "",
            f"out of sample (the same cubins timed again by a later run): {check['binaries']} "
            f"binaries, {check['pairs']} pairs; error median {check['error_median']:.3f}, "
            f"p90 {check['error_p90']:.3f}; {100 * check['share_within_margin']:.0f}% of pairs "
            f"within the margin {check['margin']:.3f}; beyond noise with different II: "
            f"{check['pairs_beyond_noise_with_ii_difference']}, ordered right: "
            f"{check['pairs_ordered_right']}",
            "  Spearman per config there: "
            + "; ".join(
                f"{name} {'-' if v['rho'] is None else format(v['rho'], '+.2f')} "
                f"(n={v['n']}, {v['distinct_ii']} II)"
                for name, v in check["spearman"].items()
            ),
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="dataset.json of sweep_plans.py analyze")
    parser.add_argument("--out", type=Path, default=None, help="folder for fit.json, fit.txt")
    parser.add_argument(
        "--rules-today",
        type=Path,
        metavar="CORPUS",
        help="leave out plans that today's lowering rules forbid (corpus/ttgir for the graphs)",
    )
    parser.add_argument(
        "--check",
        type=Path,
        nargs="*",
        default=[],
        metavar="TUNE.json",
        help="tune.json of later runs: the same cubins timed again, to judge the fit",
    )
    args = parser.parse_args(argv)
    allowed = lowering_today(args.rules_today) if args.rules_today else (lambda record: True)
    records = json.loads(args.dataset.read_text())["records"]
    result = report(records, allowed)
    if args.check:
        runs = [json.loads(path.read_text()) for path in args.check]
        again = remeasured(records, runs)
        result["out_of_sample"] = out_of_sample(again, result["margin_all_families"], allowed)
    out = args.out or args.dataset.parent
    (out / "fit.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    (out / "fit.txt").write_text(text(result))
    print(text(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

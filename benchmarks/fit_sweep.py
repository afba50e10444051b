"""How well the cost model ranks the plans of the sweep, and the margin `optimal` needs.

    python -m benchmarks.fit_sweep benchmarks/results/2026-12-01-plan-sweep/dataset.json

Works on the distinct binaries of each config that differ only in their plan (default knobs
and num_stages; ``sweep_plans.is_plan_only``), since the model prices plans, not knobs:

- Spearman of modeled II (summed over a kernel's loops) against the measured median, per
  config, with n and the number of tied II values; no normalization, no pooled points;
- pairwise agreement: over pairs of binaries whose measured times differ beyond noise
  (``sweep_plans.tie``), how often the lower modeled II is the faster binary;
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

from benchmarks.stats import spearman
from benchmarks.sweep_plans import NOISE, is_plan_only, tie

REPO_ROOT = Path(__file__).resolve().parent.parent

QUANTILE = 0.9


def modeled_ii(record: dict) -> int | None:
    iis = [loop.get("ii") for loop in record["loops"]]
    return sum(iis) if iis and all(isinstance(i, int) for i in iis) else None


def plan_binaries(records: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(kernel, config) -> its plan-only binaries with a modeled II."""
    out: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        if any(is_plan_only(v) and v != "triton" for v in r["variants"]) and modeled_ii(r):
            out.setdefault((r["kernel"], r["config"]), []).append(r)
    return out


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


def report(records: list[dict]) -> dict:
    groups = plan_binaries(records)
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
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="dataset.json of sweep_plans.py analyze")
    parser.add_argument("--out", type=Path, default=None, help="folder for fit.json, fit.txt")
    args = parser.parse_args(argv)
    result = report(json.loads(args.dataset.read_text())["records"])
    out = args.out or args.dataset.parent
    (out / "fit.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    (out / "fit.txt").write_text(text(result))
    print(text(result), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The bench's results.md: correctness, speed, the model's correlation with time, targets,
ws_solver against Triton and the vendor, sustained timings. It renders results.json rows;
the one statistic it computes is the Spearman correlation it prints (`correlations`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import Any

from benchmarks.analysis import against_stock
from benchmarks.common.bench_strategies import DESCRIPTION, OURS, ROUNDS, STRATEGIES, status_of
from benchmarks.common.stats import spearman

TARGETS = {"gemm": 0.95, "attention_fwd": 1.0}  # ratio to the vendor reference to beat


def modeled_ii(row: dict) -> int | None:
    loops = (row.get("compile") or {}).get("dropin", {}).get("loops") or []
    iis = [loop.get("ii") for loop in loops if isinstance(loop.get("ii"), (int, float))]
    return sum(iis) if iis else None


def correlations(results: list[dict]) -> dict[str, dict]:
    """Spearman of modeled II vs measured time within each config, over its distinct binaries
    of ws_solver's strategies (strategies that share a cubin are one point), with no
    normalization: II is per iteration of a config's own loop, so configs are not pooled.
    `distinct_ii` bounds what the statistic can say (few values mean many ties); `raw` pools
    a kernel's configs unscaled, for reference only."""
    out = {}
    for kernel in sorted({r["kernel"] for r in results}):
        rows = [
            r
            for r in results
            if r["kernel"] == kernel
            and r["strategy"] in OURS
            and "ms" in (r.get("bench") or {})
            and modeled_ii(r)
        ]
        binaries: dict[tuple[str, str], dict] = {}
        for r in rows:
            binaries.setdefault(
                (r["config"], (r.get("compile") or {}).get("binary") or r["job"]), r
            )
        points = list(binaries.values())
        configs = {}
        for config in sorted({r["config"] for r in points}):
            mine = [r for r in points if r["config"] == config]
            iis = [modeled_ii(r) for r in mine]
            configs[config] = {
                "points": len(mine),
                "distinct_ii": len(set(iis)),
                "spearman": spearman(iis, [r["bench"]["ms"] for r in mine]),
            }
        out[kernel] = {
            "points": len(points),
            "configs": configs,
            "raw": spearman([modeled_ii(r) for r in points], [r["bench"]["ms"] for r in points]),
        }
    return out


# -- results.md ---------------------------------------------------------------------------------
def _fmt(x: Any, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return "inf" if math.isinf(x) else format(x, spec)
    return str(x)


def markdown(env: dict, results: list[dict], corr: dict) -> str:
    lines = [
        f"# GPU results {env['date']}",
        "",
        f"- GPU: {env.get('gpu', '(dry run, no GPU)')}; SMs: {env.get('sms', '-')}",
        f"- Triton {env.get('triton')}, torch {env.get('torch', '-')}, CUDA {env.get('cuda', '-')},"
        f" Python {env['python']}",
        f"- git revision measured: {env['git_revision']}",
        "- strategies: " + "; ".join(f"`{k}`: {v}" for k, v in DESCRIPTION.items()),
        f"- timing: {env.get('timing_rounds', ROUNDS)} or more interleaved rounds per config"
        " (a multiple of the binaries timed), each starting one variant later, median;"
        " variants with identical cubins are timed once (spread column: `= strategy`)",
        *_sustain_header(env.get("sustain")),
        "",
        "## Correctness",
        "",
        "| kernel | config | strategy | status | max rel err (3 seeds) | repeat diffs |"
        " warps | WS ops / partitions | static races | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        comp = r.get("compile") or {}
        ver = r.get("verify") or {}
        notes = comp.get("error") or ver.get("why") or ""
        fb = (comp.get("dropin") or {}).get("fallbacks") or []
        if fb and not notes:
            notes = f"{fb[0]['strategy']}: {fb[0]['reason']}"
        lines.append(
            f"| {r['kernel']} | {r['config']} | {r['strategy']} | {status_of(r)} | "
            f"{_fmt(ver.get('max_rel_err'))} | {_fmt(ver.get('nondeterministic_launches'))} | "
            f"{_fmt(comp.get('num_warps'))} | {_fmt(comp.get('warp_specialize_ops'))} / "
            f"{_fmt(comp.get('partition_regions'))} | {_fmt(comp.get('static_races'))} | "
            f"{notes.replace('|', '/')[:160]} |"
        )
    timed = [r for r in results if "ms" in (r.get("bench") or {})]
    if timed:
        lines += [
            "",
            "## Speed (median of interleaved rounds; ratio = rate / vendor rate, same run)",
            "",
            "| kernel | config | strategy | ms | spread | rate | unit | vendor | vendor rate |"
            " ratio | regs | smem KiB | WS partitions | modeled II |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in timed:
            b, comp = r["bench"], r.get("compile") or {}
            v = b.get("vendor") or {}
            smem = comp.get("shared_bytes")
            lines.append(
                f"| {r['kernel']} | {r['config']} | {r['strategy']} | {b['ms']:.3f} | "
                f"{_spread(b) if 'same_binary_as' not in b else '= ' + b['same_binary_as']} | "
                f"{b['rate']:.1f} | {b['unit']} | {v.get('label', '-')} | "
                f"{_fmt(v.get('rate'), '.1f')} | {_fmt(b.get('ratio_to_vendor'), '.3f')} | "
                f"{_fmt(comp.get('n_regs'))} | {_fmt(smem / 1024 if smem else None, '.0f')} | "
                f"{1 + comp['partition_regions'] if comp.get('warp_specialize_ops') else 1} | "
                f"{_fmt(modeled_ii(r))} |"
            )
        lines += [
            "",
            "## Modeled II vs measured time (Spearman, ws_solver strategies)",
            "",
            "Within each config, over distinct binaries (n), unnormalized; `-` below 3 binaries "
            "or when II or time is constant. With few distinct II values (ties) the statistic "
            "is bounded well below 1 and says little. The plan sweep (benchmarks/gpu/sweep_plans.py"
            ", fit_sweep.py) is the check of the model.",
            "",
        ]
        for kernel, c in corr.items():
            per_config = "; ".join(
                f"{config} {_fmt(v['spearman'], '.2f')} (n={v['points']}, {v['distinct_ii']} II)"
                for config, v in c["configs"].items()
            )
            lines.append(f"- {kernel}: {per_config}")
        lines += ["", "## Targets (best verified variant per kernel vs the vendor, same run)", ""]
        lines += _targets(results)
        lines += ["", "## ws_solver vs Triton (best verified strategy of each, same run)", ""]
        lines += _versus_triton(results)
        lines += against_stock.markdown_section(results, lambda r: status_of(r) == "ok")
        lines += _alternatives(results)
        lines += _sustained_table(results)
    return "\n".join(lines) + "\n"


def _sustain_header(sustain: dict | None) -> list[str]:
    if not sustain:
        return []
    where = f"configs containing `{sustain['configs']}`" if sustain["configs"] else "every config"
    return [
        f"- sustained timing ({where}): each variant and the vendor back to back for "
        f"{sustain['seconds']:g} s, {sustain['rounds']} interleaved rounds (`## Sustained`)"
    ]


def _sustained_table(results: list[dict]) -> list[str]:
    """The sustained timings (vendor first per config), where the run took them."""
    rows = [r for r in results if "sustained" in (r.get("bench") or {})]
    if not rows:
        return []
    lines = [
        "",
        "## Sustained (each variant back to back, interleaved rounds, GPU sampled)",
        "",
        "Rate: median over the rounds; SM clock, power and the share of samples with the "
        "power cap active: over all rounds; J: energy per launch. A kernel at the power "
        "cap is as fast as its energy per launch allows.",
        "",
        "| kernel | config | strategy | rate | × vendor | SM MHz | W | power-capped | J/launch |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    # Each vendor timing heads the rows measured against it (rows of one config can hold
    # different ones, e.g. from a results file merged from several runs).
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        vendor_row = r["bench"].get("vendor") or {}
        timing = (r["kernel"], r["config"], (vendor_row.get("sustained") or {}).get("rate"))
        groups.setdefault(timing, []).append(r)
    for (kernel, config, _), members in groups.items():
        vendor_row = members[0]["bench"].get("vendor") or {}
        if "sustained" in vendor_row:
            label = vendor_row.get("label", "vendor")
            lines.append(_sustained_line(kernel, config, label, vendor_row))
        lines += [_sustained_line(kernel, config, r["strategy"], r["bench"]) for r in members]
    return lines


def _sustained_line(kernel: str, config: str, label: str, row: dict) -> str:
    s = row["sustained"]
    samples = [x for x in s["rounds"] if x.get("samples")]

    def mean(key: str) -> float | None:
        return statistics.mean(x[key] for x in samples) if samples else None

    return (
        f"| {kernel} | {config} | {label} | {s['rate']:.1f} | "
        f"{_fmt(s.get('ratio_to_vendor', 1.0), '.3f')} | {_fmt(mean('sm_mhz'), '.0f')} | "
        f"{_fmt(mean('power_w'), '.0f')} | {_fmt(mean('power_capped'), '.0%')} | "
        f"{_fmt(mean('joules_per_launch'), '.3f')} |"
    )


TRITON_STRATEGIES = ("builtin", "triton")


def _spread(bench_row: dict) -> str:
    """(slowest - fastest) / median of the interleaved timing rounds, in percent."""
    rounds = bench_row.get("ms_rounds") or []
    if len(rounds) < 2:
        return "-"
    return f"{100 * (max(rounds) - min(rounds)) / bench_row['ms']:.1f}%"


def _fastest(rows: list[dict], strategies: Iterable[str]) -> dict | None:
    """The verified, timed row with the highest rate among `strategies` (rates, not times:
    a kernel's configs may do different work, e.g. causal attention)."""
    timed = [
        r
        for r in rows
        if r["strategy"] in strategies and status_of(r) == "ok" and "rate" in (r.get("bench") or {})
    ]
    return max(timed, key=lambda r: r["bench"]["rate"], default=None)


def _versus_triton(results: list[dict]) -> list[str]:
    """Per kernel config and per kernel (best config): rate of the fastest ws_solver strategy
    over the fastest Triton strategy (> 1: ws_solver faster)."""
    lines = [
        "| kernel | config | best ws_solver | rate | best Triton | rate | speedup |",
        "|---|---|---|---|---|---|---|",
    ]
    for kernel in sorted({r["kernel"] for r in results}):
        rows = [r for r in results if r["kernel"] == kernel]
        groups = [
            (c, [r for r in rows if r["config"] == c]) for c in sorted({r["config"] for r in rows})
        ]
        for config, chosen in [*groups, ("(best config)", rows)]:
            ours, theirs = _fastest(chosen, OURS), _fastest(chosen, TRITON_STRATEGIES)
            if ours is None or theirs is None:
                continue
            speedup = ours["bench"]["rate"] / theirs["bench"]["rate"]
            lines.append(
                f"| {kernel} | {config} | {_variant(ours, config)} | {ours['bench']['rate']:.1f} | "
                f"{_variant(theirs, config)} | {theirs['bench']['rate']:.1f} | {speedup:.3f} |"
            )
    return lines


def _variant(row: dict, config: str) -> str:
    return row["strategy"] + (f" ({row['config']})" if config.startswith("(") else "")


def _alternatives(results: list[dict]) -> list[str]:
    """The vendor's alternative implementations timed in the same run (e.g. SDPA backends)."""
    lines: list[str] = []
    seen = set()
    for r in results:
        v = (r.get("bench") or {}).get("vendor") or {}
        key = (r["kernel"], r["config"])
        if not v.get("alternatives") or key in seen:
            continue
        seen.add(key)
        if not lines:
            lines += ["", "## Vendor alternatives (same run)", ""]
            lines += [
                "| kernel | config | default | rate | alternative | rate |",
                "|---|---|---|---|---|---|",
            ]
        for label, alt in v["alternatives"].items():
            rate = _fmt(alt.get("rate"), ".1f") if "rate" in alt else alt.get("error", "-")
            lines.append(
                f"| {r['kernel']} | {r['config']} | {v.get('label')} | "
                f"{_fmt(v.get('rate'), '.1f')} | {label} | {rate} |"
            )
    return lines


def _targets(results: list[dict]) -> list[str]:
    out = []
    for kernel in sorted({r["kernel"] for r in results}):
        best: dict[str, dict] = {}
        for r in results:
            b = r.get("bench") or {}
            if r["kernel"] != kernel or "rate" not in b or b.get("failed"):
                continue
            if r["strategy"] not in best or b["rate"] > best[r["strategy"]]["bench"]["rate"]:
                best[r["strategy"]] = r
        if not best:
            continue
        target = TARGETS["gemm"] if kernel.startswith("gemm") else TARGETS.get(kernel)
        parts = []
        for s in STRATEGIES:
            if s in best:
                ratio = best[s]["bench"].get("ratio_to_vendor")
                parts.append(f"{s} {_fmt(ratio, '.3f')} ({best[s]['config']})")
        goal = f"target >= {target}x" if target else "no target"
        out.append(f"- {kernel} ({goal}): " + ", ".join(parts))
    return out


def print_table(results: list[dict]) -> None:
    print(f"\n{'variant':<58} {'status':<16} {'rel err':>9} {'rate':>8} {'ratio':>6} {'WS':>3}")
    for r in results:
        b = r.get("bench") or {}
        comp = r.get("compile") or {}
        print(
            f"{r['kernel'] + '.' + r['config'] + '.' + r['strategy']:<58} {status_of(r):<16} "
            f"{_fmt((r.get('verify') or {}).get('max_rel_err')):>9} "
            f"{_fmt(b.get('rate'), '.1f'):>8} {_fmt(b.get('ratio_to_vendor'), '.3f'):>6} "
            f"{_fmt(comp.get('warp_specialize_ops')):>3}"
        )

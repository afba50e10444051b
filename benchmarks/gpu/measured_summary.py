"""What a bench_measured sweep says: per configuration stock / `optimal` and stock / `measured`,
and issue 48's targets over the configurations timed (no torch: CPU tests run it).

- `optimal` more than 3% slower than stock beyond the rounds' spread: its median below 0.97x
  stock's speed and its fastest round slower than stock's slowest
  (``configspace_sweep.ConfigRow.beyond_spread``, the config-space sweep's definition);
- `measured` more than 2% slower than the faster (by median) of stock and `optimal`;
- geomeans of stock's time over each variant's, and over the faster of stock and `optimal`
  (n: the configurations where both were timed), overall and per family;
- `measured`'s first launch (seconds, the arguments' copies), wrong results, failures, and
  the census: configurations where the kernel `optimal` kept spills and stock's does not.

    python -m benchmarks.gpu.bench_measured summary OUT/results-part*.jsonl [--out MD]
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

from benchmarks.analysis.configspace_sweep import SLOWER, STOCK, ConfigRow, Timed, geomean

VARIANTS = ("stock", "optimal", "measured")
MEASURED_SLOWER = 0.98  # "more than 2% slower"
_KEY = {"stock": STOCK, "optimal": "optimal", "measured": "measured"}  # ConfigRow's names


# -- the compile report's register use ---------------------------------------------------------
def usage_of(built: dict | None) -> dict | None:
    """{registers, spilled_bytes} of a decision record's build (ptxas's usage), or None."""
    usage = (built or {}).get("usage")
    if not isinstance(usage, dict):
        return None
    spilled = max(usage.get("stack_bytes") or 0, usage.get("spill_store_bytes") or 0)
    return {"registers": usage.get("registers"), "spilled_bytes": spilled}


def decision_usage(decision: dict | None) -> dict:
    """The kept kernel's label and usage, and stock's, from a report's ``decision`` record
    (``ws_solver.triton.dropin.decision_check.settle``); {} when there is none."""
    if not decision:
        return {}
    builds = [decision.get(k) for k in ("ours", "other", "triton")]
    by_plan = {b.get("plan"): b for b in builds if isinstance(b, dict)}
    kept = decision.get("kept") or (decision.get("ours") or {}).get("plan")
    kept_build = decision.get("stock") if kept == "stock" else by_plan.get(kept)
    return {
        "kept": kept,
        "kept_usage": usage_of(kept_build),
        "stock_usage": usage_of(decision.get("stock")),
    }


# -- rows ------------------------------------------------------------------------------------
def load(paths: Iterable[Path]) -> list[dict]:
    """Rows of the jsonl files, a later file's record of a configuration replacing an earlier
    one's (per Triton version)."""
    rows: dict[tuple, dict] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[(row.get("triton"), row.get("family"), row["name"])] = row
    return list(rows.values())


def key(row: dict) -> str:
    return f"{row.get('family', '?')}.{row['name']}"


def timed(entry: dict | None) -> Timed | None:
    """A variant's timing: verified and timed, else None."""
    entry = entry or {}
    ms = entry.get("ms") or []
    if entry.get("status") != "ok" or not ms:
        return None
    return Timed(statistics.median(ms), min(ms), max(ms), False, entry.get("binary"))


def config_row(row: dict) -> ConfigRow:
    """The row as the config-space sweep's ConfigRow (stock under its name there)."""
    times = {_KEY[v]: t for v in VARIANTS if (t := timed(row.get(v))) is not None}
    failed = {_KEY[v]: why for v in VARIANTS if (why := failure(row.get(v))) is not None}
    return ConfigRow(row.get("family", "?"), row["name"], times, failed, {})


def failure(entry: dict | None) -> str | None:
    """Why a variant was not timed: its launch failed ("error: ..."), or it ran and was wrong
    (None: it was timed, or never run: the config's row says why)."""
    if entry is None:
        return None
    if entry.get("error"):
        return f"error: {entry['error']}"
    if entry.get("status") == "wrong":
        return f"wrong: rel err {entry.get('error_rel')}, repeatable {entry.get('repeatable')}"
    return None


def unmeasured(row: dict) -> bool:
    """A config whose inputs, reference or launches stopped the run (stalled, CUDA lost)."""
    return bool(row.get("error") or row.get("cuda_lost"))


def optimal_slower(r: ConfigRow) -> bool:
    """`optimal` more than 3% slower than stock, beyond the rounds' spread."""
    x = r.ratio("optimal")
    return x is not None and x < SLOWER and r.beyond_spread("optimal", STOCK)


def best_base(r: ConfigRow) -> str | None:
    """The faster (by median) of stock and `optimal`, as timed."""
    have = [s for s in (STOCK, "optimal") if s in r.timed]
    return min(have, key=lambda s: r.timed[s].ms) if have else None


def measured_vs_best(r: ConfigRow) -> float | None:
    """The faster of stock and `optimal`'s time over `measured`'s (< 1: measured slower)."""
    base = best_base(r)
    return r.ratio("measured", base) if base else None


def measured_behind(r: ConfigRow) -> bool:
    """`measured` more than 2% slower than the faster of stock and `optimal`."""
    x = measured_vs_best(r)
    return x is not None and x < MEASURED_SLOWER


def spills_where_stock_does_not(row: dict) -> bool:
    """The kernel `optimal` kept spills and stock's does not (the decision record's ptxas)."""
    use = (row.get("optimal") or {}).get("usage") or {}
    kept, stock = use.get("kept_usage"), use.get("stock_usage")
    return bool(kept and stock and kept["spilled_bytes"] and not stock["spilled_bytes"])


def binary_spills_where_stock_does_not(row: dict, variant: str) -> bool:
    """The binary `variant` launched has local memory (Triton's n_spills) and stock's none."""
    ours, stock = (row.get(variant) or {}).get("n_spills"), (row.get("stock") or {}).get("n_spills")
    return ours is not None and stock is not None and ours > 0 and stock == 0


# -- the report --------------------------------------------------------------------------------
def speedups(rows: list[ConfigRow]) -> dict[str, tuple[float | None, int]]:
    """Geomean (and n) of stock's time over optimal's, measured's and the faster of the two."""
    opt = [x for r in rows if (x := r.ratio("optimal")) is not None]
    mea = [x for r in rows if (x := r.ratio("measured")) is not None]
    best = [
        r.timed[STOCK].ms / min(r.timed[STOCK].ms, r.timed["optimal"].ms)
        for r in rows
        if STOCK in r.timed and "optimal" in r.timed
    ]
    return {
        "optimal": (geomean(opt), len(opt)),
        "measured": (geomean(mea), len(mea)),
        "best": (geomean(best), len(best)),
    }


def _f(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def summary_lines(rows: list[dict]) -> list[str]:
    """The targets and counts over `rows` (one Triton version), then per family."""
    cr = [config_row(r) for r in rows]
    g = speedups(cr)
    slower = [r for r in cr if optimal_slower(r)]
    behind = [r for r in cr if measured_behind(r)]
    behind_apart = [r for r in behind if r.beyond_spread("measured", best_base(r) or STOCK)]
    lines = [
        f"- configurations: {len(rows)}; timed: stock {sum(STOCK in r.timed for r in cr)}, "
        f"optimal {sum('optimal' in r.timed for r in cr)}, "
        f"measured {sum('measured' in r.timed for r in cr)}",
        f"- stock / optimal, geomean: {_f(g['optimal'][0])} (n = {g['optimal'][1]}); "
        f"optimal more than 3% slower than stock beyond the rounds' spread: {len(slower)} "
        "(target 0)",
        f"- stock / measured, geomean: {_f(g['measured'][0])} (n = {g['measured'][1]}; "
        f"target >= 1.10); measured more than 2% slower than the faster of stock and optimal: "
        f"{len(behind)} (target 0; {len(behind_apart)} of them beyond the spread)",
        f"- stock / the faster of stock and optimal, geomean: {_f(g['best'][0])} "
        f"(n = {g['best'][1]})",
    ]
    shared = [r for r in rows if any((r.get(v) or {}).get("timed_as") for v in VARIANTS)]
    if shared:
        lines.append(
            f"- configurations where a variant launched another's binary and took its times "
            f"(one kernel, timed once): {len(shared)}"
        )
    lines += first_launch_lines(rows)
    lines += agreement_lines(rows)
    for r in slower:
        lines.append(
            f"  - optimal slower than stock: {r.kernel}.{r.config} {_f(r.ratio('optimal'))}"
        )
    for r in behind:
        lines.append(
            f"  - measured behind the faster of stock and optimal: {r.kernel}.{r.config} "
            f"{_f(measured_vs_best(r))}"
        )
    lines += problem_lines(rows)
    lines += census_lines(rows)
    lines += [
        "",
        "| family | n | stock/optimal | stock/measured | stock/best | optimal >3% slower "
        "| measured >2% behind |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for family in dict.fromkeys(r.get("family", "?") for r in rows):
        fam = [r for r in cr if r.kernel == family]
        fg = speedups(fam)
        lines.append(
            f"| {family} | {len(fam)} | {_f(fg['optimal'][0])} | {_f(fg['measured'][0])} | "
            f"{_f(fg['best'][0])} | {sum(map(optimal_slower, fam))} | "
            f"{sum(map(measured_behind, fam))} |"
        )
    return lines


def first_launch_lines(rows: list[dict]) -> list[str]:
    """`measured`'s first launch: wall seconds, the arguments' copies, the peak above them."""
    entries = [m for r in rows if (m := r.get("measured") or {}).get("first_launch_s") is not None]
    if not entries:
        return ["- measured's first launch: none recorded"]
    wall = [e["first_launch_s"] for e in entries]
    extra = [(e.get("tuning") or {}).get("extra_bytes") or 0 for e in entries]
    peak = [e.get("peak_extra_bytes") or 0 for e in entries]
    cached = sum(bool((e.get("tuning") or {}).get("cached")) for e in entries)
    mib = 2**20
    return [
        f"- measured's first launch: median {statistics.median(wall):.2f} s, max {max(wall):.2f}"
        f" s (n = {len(wall)}; {cached} read a stored choice); the arguments' copies median "
        f"{statistics.median(extra) / mib:.0f} MiB, max {max(extra) / mib:.0f} MiB; peak above "
        f"the arguments max {max(peak) / mib:.0f} MiB"
    ]


def tuning_over_bench(rows: list[dict], variants: tuple[str, ...] = VARIANTS) -> list[float]:
    """Per binary both timed: the tuning's median over the bench's (at least 3 tuning
    rounds; a variant the bench timed as another's binary counts once). Near 1 where the two
    timers read the same power state (2026-12-07-power-state-h100)."""
    out = []
    for row in rows:
        tuning = (row.get("measured") or {}).get("tuning") or {}
        rounds = {
            c["binary"]: c["median_ms"]
            for c in tuning.get("candidates") or []
            if c.get("status") == "timed" and len(c.get("ms") or []) >= 3
        }
        for v in variants:
            e = row.get(v) or {}
            tuned = rounds.get(e.get("binary"))
            if e.get("status") == "ok" and e.get("median_ms") and not e.get("timed_as") and tuned:
                out.append(tuned / e["median_ms"])
    return out


def agreement_lines(rows: list[dict]) -> list[str]:
    """How far measured mode's tuning and the bench read the same binaries apart."""
    lines = []
    for label, variants in (("stock's binary", VARIANTS[:1]), ("every binary", VARIANTS)):
        xs = sorted(tuning_over_bench(rows, variants))
        if not xs:
            continue
        n = len(xs)
        lines.append(
            f"- the tuning's time over the bench's, {label}: median {statistics.median(xs):.3f}, "
            f"p10 {xs[n // 10]:.3f}, p90 {xs[min(n - 1, 9 * n // 10)]:.3f} (n = {n}; more "
            f"than 3% apart: {sum(abs(x - 1) > 0.03 for x in xs)})"
        )
    return lines


def problem_lines(rows: list[dict]) -> list[str]:
    """Wrong results, and configurations where stock or ours failed to run."""
    wrong, stock_failed, ours_failed = [], [], []
    skipped = [f"{key(r)}: {r.get('error') or r.get('cuda_lost')}" for r in rows if unmeasured(r)]
    for row in rows:
        for v in VARIANTS:
            why = failure(row.get(v))
            if why is None:
                continue
            if why.startswith("wrong"):
                wrong.append(f"{key(row)} {v}: {why}")
            elif v == "stock":
                stock_failed.append(f"{key(row)}: {why}")
            else:
                ours_failed.append(f"{key(row)} {v}: {why}")
    lines = [
        f"- wrong or racy results: {len(wrong)}; stock failed: {len(stock_failed)}; "
        f"optimal or measured failed: {len(ours_failed)}; configurations not (fully) "
        f"measured: {len(skipped)}"
    ]
    lines += [f"  - not measured: {w[:200]}" for w in skipped]
    lines += [f"  - wrong: {w[:200]}" for w in wrong]
    lines += [f"  - stock failed: {w[:200]}" for w in stock_failed]
    lines += [f"  - ours failed: {w[:200]}" for w in ours_failed]
    return lines


def census_lines(rows: list[dict]) -> list[str]:
    """Where the kept kernel spills and stock's does not: the decision records and the
    launched binaries (Triton's n_spills) say."""
    records = [r for r in rows if spills_where_stock_does_not(r)]
    binaries = {
        v: [r for r in rows if binary_spills_where_stock_does_not(r, v)] for v in VARIANTS[1:]
    }
    lines = [
        f"- census: optimal's kept kernel spills and stock's does not (decision record): "
        f"{len(records)}; the launched binary has local memory and stock's none: optimal "
        f"{len(binaries['optimal'])}, measured {len(binaries['measured'])}"
    ]
    for r in records:
        use = r["optimal"]["usage"]
        lines.append(
            f"  - {key(r)}: kept {use['kept']} {use['kept_usage']}, stock {use['stock_usage']}"
        )
    return lines


def _cell(row: dict, r: ConfigRow, variant: str) -> str:
    x = r.ratio(variant)
    return _f(x) if x is not None else (failure(row.get(variant)) or "-")[:40]


def _regs(u: dict | None) -> str:
    return f"{u['registers']}/{u['spilled_bytes']}" if u else "-"


def table(rows: list[dict]) -> list[str]:
    """A line per configuration."""
    lines = [
        "| configuration | stock ms | stock/optimal | stock/measured | measured picks | "
        "optimal built (rule) | regs/spill B: stock, optimal kept | first launch s |",
        "|---|--:|--:|--:|---|---|---|--:|",
    ]
    for row in rows:
        r = config_row(row)
        s, o, m = (row.get(v) or {} for v in VARIANTS)
        stock = r.timed.get(STOCK)
        use = o.get("usage") or {}
        lines.append(
            f"| {key(row)} | {_f(stock.ms, 4) if stock else (failure(s) or '-')[:40]} | "
            f"{_cell(row, r, 'optimal')} | {_cell(row, r, 'measured')} | {m.get('winner')} | "
            f"{o.get('strategy_used')} ({o.get('rule')}) | {_regs(use.get('stock_usage'))}, "
            f"{_regs(use.get('kept_usage'))} | {_f(m.get('first_launch_s'), 2)} |"
        )
    return lines


def report(rows: list[dict]) -> str:
    """Markdown: per Triton version, the summary lines and the per-configuration table."""
    out = []
    versions = dict.fromkeys(r.get("triton") or "?" for r in rows)
    for version in versions:
        mine = [r for r in rows if (r.get("triton") or "?") == version]
        gpu = next((r.get("gpu") for r in mine if r.get("gpu")), "?")
        out += [f"## Triton {version} ({gpu})", ""]
        out += summary_lines(mine)
        out += [""] + table(mine) + [""]
    return "\n".join(out)

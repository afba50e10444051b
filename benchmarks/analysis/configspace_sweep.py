"""The config-space sweep on the H200 (issue 34): which configurations, and what the run says.

``select`` writes the configurations to time, chosen before any timing by a fixed rule: every
sm_90 configuration of the GEMM families whose space is small (gemm_tma, gemm_fp8) and every
k-th of the larger ones (gemm_persistent, attention_fwd) in the space's own order, k chosen so
that the total reaches ``--at-least``. The output is bench_kernels' ``--extra-configs`` JSON.

``report RESULTS.json`` reads a bench_kernels run of those configurations under builtin (stock
Triton), none, heuristic and optimal and writes the per-configuration table and the issue's
targets: optimal against stock, against the better of stock and none, and whether the
specialize decision was the faster one. Records of the ``autotune`` strategy (what
``ws_solver.triton.autotune`` chose for the launch) add its column and its targets against
stock, over all configurations and over those whose autotuned binary is not stock's, and
which candidate won how often. A strategy is compared with the stock timed in its own run
(the same interleaved rounds) where that run timed stock.

    python -m benchmarks.analysis.configspace_sweep select --out sweep_configs.json
    python -m benchmarks.analysis.configspace_sweep report RUN/results.json [RUN2/results.json] \
        --out MD
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

STOCK, NONE, AUTOTUNE = "builtin", "none", "autotune"
STRATEGIES = (STOCK, NONE, "heuristic", "optimal")
WHOLE = ("gemm_tma", "gemm_fp8")  # small spaces: every configuration
SAMPLED = ("gemm_persistent", "attention_fwd")
SLOWER = 0.97  # "more than 3% slower"
APART = 1.03  # "differ by more than 3%"


def select(space: dict[str, dict[str, dict]], at_least: int) -> dict[str, dict[str, dict]]:
    """The configurations to time: WHOLE families whole, SAMPLED ones every k-th."""
    chosen = {k: dict(space[k]) for k in WHOLE if k in space}
    rest = sum(len(space.get(k, {})) for k in SAMPLED)
    need = max(0, at_least - sum(len(v) for v in chosen.values()))
    step = max(1, rest // need) if need else rest + 1
    for kernel in SAMPLED:
        names = list(space.get(kernel, {}))
        chosen[kernel] = {n: space[kernel][n] for n in names[::step]}
    return chosen


@dataclass(frozen=True)
class Timed:
    ms: float  # median over the rounds
    fastest: float
    slowest: float
    specialized: bool
    binary: str | None


@dataclass(frozen=True)
class ConfigRow:
    kernel: str
    config: str
    timed: dict[str, Timed]  # by strategy, those that verified and timed
    failed: dict[str, str]  # by strategy: why not timed (compile error, wrong result)
    decision: dict  # optimal's decision-check record
    verified: frozenset[str] = frozenset()  # strategies whose kernel computed the right answer
    paired: dict[str, Timed] = field(default_factory=dict)  # stock of each strategy's own run
    tuning: dict = field(default_factory=dict)  # the autotune record's compile (its winner)

    def baseline(self, strategy: str, against: str) -> Timed | None:
        """`against`'s timing to compare `strategy`'s with: stock's from `strategy`'s own run
        when that run timed it, else the latest."""
        if against == STOCK and strategy in self.paired:
            return self.paired[strategy]
        return self.timed.get(against)

    def ratio(self, strategy: str, against: str = STOCK) -> float | None:
        a, b = self.baseline(strategy, against), self.timed.get(strategy)
        return a.ms / b.ms if a and b else None

    def beyond_spread(self, strategy: str, against: str) -> bool:
        """`strategy` slower than `against` with the two's rounds apart."""
        a, b = self.baseline(strategy, against), self.timed.get(strategy)
        return bool(a and b and b.fastest > a.slowest)

    def same_binary(self, strategy: str, against: str = STOCK) -> bool:
        """Whether `strategy` ran `against`'s cubin (unknown digests count as different)."""
        a, b = self.baseline(strategy, against), self.timed.get(strategy)
        return bool(a and b and a.binary and a.binary == b.binary)

    def best_baseline(self) -> str | None:
        """The faster of stock and none, as timed."""
        have = [s for s in (STOCK, NONE) if s in self.timed]
        return min(have, key=lambda s: self.timed[s].ms) if have else None


def rows_of(results: list[dict], runs: list[int] | None = None) -> list[ConfigRow]:
    """One row per configuration; a later run's record of a (config, strategy) replaces an
    earlier one's (a rerun of some configs after a change). `runs`: the run each record
    comes from (default: one run), so that a strategy is paired with its own run's stock."""
    runs = runs if runs is not None else [0] * len(results)
    latest = {
        (r["kernel"], r["config"], r["strategy"]): (r, n)
        for r, n in zip(results, runs, strict=True)
    }
    stock_of = {
        (r["kernel"], r["config"], n): r
        for r, n in zip(results, runs, strict=True)
        if r["strategy"] == STOCK
    }
    by_config: dict[tuple[str, str], list[tuple[dict, int]]] = {}
    for (kernel, config, _), found in latest.items():
        by_config.setdefault((kernel, config), []).append(found)
    out = []
    for (kernel, config), rows in sorted(by_config.items()):
        timed, failed, decision, verified, paired, tuning = {}, {}, {}, set(), {}, {}
        for r, run in rows:
            strategy = r["strategy"]
            if (r.get("verify") or {}).get("passed"):
                verified.add(strategy)
            comp = r.get("compile", {})
            if strategy == "optimal":
                decision = (comp.get("dropin") or {}).get("decision") or {}
            if strategy == AUTOTUNE:
                tuning = {k: comp.get(k) for k in ("winner", "tuned", "note", "strategy_used")}
            found = _timed(r)
            if found is not None:
                timed[strategy] = found
            else:
                failed[strategy] = _why_not(r)
            stock = stock_of.get((kernel, config, run))
            if strategy != STOCK and stock is not None and _timed(stock) is not None:
                paired[strategy] = _timed(stock)
        out.append(
            ConfigRow(kernel, config, timed, failed, decision, frozenset(verified), paired, tuning)
        )
    return out


def _timed(r: dict) -> Timed | None:
    """A record's timing (None when it was not timed, or failed at the bench size)."""
    bench = r.get("bench") or {}
    rounds = bench.get("ms_rounds") or []
    if not rounds or bench.get("failed"):
        return None
    comp = r.get("compile", {})
    return Timed(
        statistics.median(rounds),
        min(rounds),
        max(rounds),
        bool(comp.get("warp_specialize_ops")),
        comp.get("binary"),
    )


def _why_not(row: dict) -> str:
    comp = row.get("compile", {})
    if comp.get("error"):
        return f"compile: {comp['error']}"[:120]
    ver = row.get("verify") or {}
    if ver and not ver.get("passed"):
        return f"wrong result: {ver.get('why', '')}"[:120]
    bench = row.get("bench") or {}
    return str(bench.get("failed") or bench.get("error") or "not timed")[:120]


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summary(rows: list[ConfigRow], strategy: str = "optimal") -> list[str]:
    vs_stock = [(r, r.ratio(strategy)) for r in rows if r.ratio(strategy) is not None]
    slower = [r for r, x in vs_stock if x < SLOWER and r.beyond_spread(strategy, STOCK)]
    stock_failed = [
        r for r in rows if r.failed.get(STOCK, "").startswith("compile") and strategy in r.verified
    ]
    best = []
    behind = []
    for r in rows:
        base = r.best_baseline()
        x = r.ratio(strategy, base) if base else None
        if x is None:
            continue
        best.append(x)
        if x < SLOWER and r.beyond_spread(strategy, base):
            behind.append(r)
    decided, right = _decisions(rows, strategy)
    wrong = [r for r in rows if any(w.startswith("wrong") for w in r.failed.values())]
    ours_only = [r for r in wrong if STOCK in r.verified]
    g = geomean([x for _, x in vs_stock])
    gb = geomean(best)
    lines = [
        f"- configurations: {len(rows)}; {strategy} timed against stock on {len(vs_stock)}; "
        f"stock failed to compile where {strategy} compiled and verified: {len(stock_failed)}",
        f"- {strategy} vs stock, geomean: {_f(g)} (target >= 1.05); more than 3% slower "
        f"beyond the rounds' spread: {len(slower)} (target 0)",
        f"- {strategy} vs the better of stock and none, geomean: {_f(gb)} over {len(best)} "
        f"(target >= 1.0); more than 3% behind beyond the spread: {len(behind)} (target 0)",
        f"- specialize decision right (within 3% of the faster) where specialized and "
        f"unspecialized differ by more than 3%: {right} of {decided}"
        + (f" ({100 * right / decided:.1f}%; target 95%)" if decided else ""),
        f"- configurations with a wrong or racy result under some strategy: {len(wrong)}, "
        f"{len(ours_only)} of them where stock's kernel verified",
    ]
    for r in wrong:
        why = "; ".join(f"{s}: {w}" for s, w in sorted(r.failed.items()) if w.startswith("wrong"))
        lines.append(f"  - wrong: {r.kernel}.{r.config}: {why[:160]}")
    for r in slower:
        lines.append(f"  - slower than stock: {r.kernel}.{r.config} {_f(r.ratio(strategy))}")
    for r in behind:
        lines.append(f"  - behind the better baseline: {r.kernel}.{r.config}")
    return lines


def _decisions(rows: list[ConfigRow], strategy: str) -> tuple[int, int]:
    """(configs where the fastest specialized and unspecialized binaries differ by more than
    3%, those where `strategy`'s kernel is within 3% of the faster of the two)."""
    decided = right = 0
    for r in rows:
        if strategy not in r.timed:
            continue
        spec = [t.ms for t in r.timed.values() if t.specialized]
        flat = [t.ms for t in r.timed.values() if not t.specialized]
        if not spec or not flat:
            continue
        fast_spec, fast_flat = min(spec), min(flat)
        if max(fast_spec, fast_flat) <= APART * min(fast_spec, fast_flat):
            continue
        decided += 1
        right += r.timed[strategy].ms <= APART * min(fast_spec, fast_flat)
    return decided, right


def autotune_summary(rows: list[ConfigRow]) -> list[str]:
    """The autotune column's targets: against stock timed in its own rounds, over every
    configuration and over those whose autotuned cubin is not stock's; which candidate won."""
    have = [r for r in rows if AUTOTUNE in r.timed or AUTOTUNE in r.failed]
    timed = [r for r in have if r.ratio(AUTOTUNE) is not None]
    distinct = [r for r in timed if not r.same_binary(AUTOTUNE)]
    stock_failed = [
        r for r in have if r.failed.get(STOCK, "").startswith("compile") and AUTOTUNE in r.verified
    ]
    failed = [r for r in have if AUTOTUNE in r.failed]
    lines = [
        f"- configurations with an autotune record: {len(have)}; timed against stock in the "
        f"same rounds: {len(timed)}, {len(distinct)} of them with a binary other than stock's; "
        f"stock failed to compile where autotune compiled and verified: {len(stock_failed)}",
    ]
    for label, among in (("all timed", timed), ("distinct binaries", distinct)):
        x = geomean([r.ratio(AUTOTUNE) for r in among])
        slower = [r for r in among if r.ratio(AUTOTUNE) < SLOWER]
        beyond = [r for r in slower if r.beyond_spread(AUTOTUNE, STOCK)]
        lines.append(
            f"- autotune vs stock, geomean over {label} ({len(among)}): {_f(x)} (target >= "
            f"1.05); more than 3% slower beyond the rounds' spread: {len(beyond)} (target 0), "
            f"by the medians: {len(slower)}"
        )
    both = [r.ratio(AUTOTUNE, "optimal") for r in timed if "optimal" in r.timed]
    if both:
        lines.append(f"- autotune vs optimal, geomean over {len(both)}: {_f(geomean(both))}")
    decided, right = _decisions(rows, AUTOTUNE)
    if decided:
        lines.append(
            f"- specialize decision right (as for optimal): {right} of {decided} "
            f"({100 * right / decided:.1f}%; target 95%)"
        )
    lines.append("- winners: " + winners([r.tuning for r in have if r.tuning]))
    for r in failed:
        lines.append(f"  - autotune failed: {r.kernel}.{r.config}: {r.failed[AUTOTUNE][:160]}")
    for r in timed:
        if r.ratio(AUTOTUNE) < SLOWER:
            spread = "beyond" if r.beyond_spread(AUTOTUNE, STOCK) else "inside"
            lines.append(
                f"  - slower than stock: {r.kernel}.{r.config} {_f(r.ratio(AUTOTUNE))} "
                f"({r.tuning.get('winner')}; {spread} the rounds' spread)"
            )
    return lines


def winners(records: list[dict]) -> str:
    """How often each candidate won, most first; the configurations not tuned, and why."""
    won = Counter(r.get("winner") for r in records if r.get("tuned") and r.get("winner"))
    text = ", ".join(f"{name} {n}" for name, n in won.most_common()) or "none tuned"
    untuned = [r for r in records if r.get("winner") and not r.get("tuned")]
    if untuned:
        why = Counter(r.get("note") or "?" for r in untuned).most_common(1)[0][0]
        text += f"; not tuned {len(untuned)} (e.g. {why[:100]})"
    return text


def table(rows: list[ConfigRow]) -> list[str]:
    tuned = any(AUTOTUNE in r.timed or AUTOTUNE in r.failed for r in rows)
    head = (
        "| config | stock ms | none | heuristic | optimal | opt/stock | stock WS | opt WS | rule |"
    )
    rule = "|---|---|---|---|---|---|---|---|---|"
    if tuned:
        head += " autotune | at/stock | winner |"
        rule += "---|---|---|"
    lines = [head, rule]
    for r in rows:
        cells = [f"{r.kernel}.{r.config}"]
        for s in STRATEGIES:
            cells.append(_ms(r, s))
        x = r.ratio("optimal")
        cells.append(_f(x))
        for s in (STOCK, "optimal"):
            t = r.timed.get(s)
            cells.append("-" if t is None else ("yes" if t.specialized else "no"))
        cells.append(str(r.decision.get("rule", "")))
        if tuned:
            same = " (= stock)" if r.same_binary(AUTOTUNE) else ""
            cells += [_ms(r, AUTOTUNE), _f(r.ratio(AUTOTUNE)) + same]
            cells.append(str(r.tuning.get("winner") or "-"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _ms(r: ConfigRow, strategy: str) -> str:
    t = r.timed.get(strategy)
    return f"{t.ms:.3f}" if t else ("fail" if strategy in r.failed else "-")


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("select", help="write the configurations to time (extra-configs JSON)")
    s.add_argument("--at-least", type=int, default=160)
    s.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("report", help="the per-config table and the targets of a run")
    r.add_argument("results", type=Path, nargs="+", help="results.json of one or more runs")
    r.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "select":
        from corpus import configspace

        space = configspace.extra_configs(configspace.space())
        chosen = select(space, args.at_least)
        args.out.write_text(json.dumps(chosen, indent=1, sort_keys=True) + "\n")
        n = sum(len(v) for v in chosen.values())
        print(f"{n} configurations: " + ", ".join(f"{k} {len(v)}" for k, v in chosen.items()))
        return 0
    results, runs = [], []
    for n, path in enumerate(args.results):  # runs of disjoint configs, or reruns
        data = json.loads(path.read_text())
        found = data["results"] if isinstance(data, dict) else data
        results += found
        runs += [n] * len(found)
    rows = rows_of(results, runs)
    has_autotune = any(AUTOTUNE in r.timed or AUTOTUNE in r.failed for r in rows)
    tuned = autotune_summary(rows) if has_autotune else []
    if any(r.ratio("optimal") is not None or "optimal" in r.failed for r in rows) or not tuned:
        lines = ["# Config-space sweep", "", *summary(rows), ""]
    else:  # an autotune run without optimal: its section only
        lines = ["# Config-space sweep", ""]
    if tuned:
        lines += ["## autotune (ws_solver.triton.autotune's choice per launch)", "", *tuned, ""]
    text = "\n".join([*lines, *table(rows), ""])
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The config-space sweep on the H200 (issue 34): which configurations, and what the run says.

``select`` writes the configurations to time, chosen before any timing by a fixed rule: every
sm_90 configuration of the GEMM families whose space is small (gemm_tma, gemm_fp8) and every
k-th of the larger ones (gemm_persistent, attention_fwd) in the space's own order, k chosen so
that the total reaches ``--at-least``. The output is bench_kernels' ``--extra-configs`` JSON.

``report RESULTS.json`` reads a bench_kernels run of those configurations under builtin (stock
Triton), none, heuristic and optimal and writes the per-configuration table and the issue's
targets: optimal against stock, against the better of stock and none, and whether the
specialize decision was the faster one.

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
from dataclasses import dataclass
from pathlib import Path

STOCK, NONE = "builtin", "none"
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

    def ratio(self, strategy: str, against: str = STOCK) -> float | None:
        a, b = self.timed.get(against), self.timed.get(strategy)
        return a.ms / b.ms if a and b else None

    def beyond_spread(self, strategy: str, against: str) -> bool:
        """`strategy` slower than `against` with the two's rounds apart."""
        a, b = self.timed.get(against), self.timed.get(strategy)
        return bool(a and b and b.fastest > a.slowest)

    def best_baseline(self) -> str | None:
        """The faster of stock and none, as timed."""
        have = [s for s in (STOCK, NONE) if s in self.timed]
        return min(have, key=lambda s: self.timed[s].ms) if have else None


def rows_of(results: list[dict]) -> list[ConfigRow]:
    """One row per configuration; a later run's record of a (config, strategy) replaces an
    earlier one's (a rerun of some configs after a change)."""
    latest = {(r["kernel"], r["config"], r["strategy"]): r for r in results}
    by_config: dict[tuple[str, str], list[dict]] = {}
    for (kernel, config, _), r in latest.items():
        by_config.setdefault((kernel, config), []).append(r)
    out = []
    for (kernel, config), rows in sorted(by_config.items()):
        timed, failed, decision, verified = {}, {}, {}, set()
        for r in rows:
            strategy = r["strategy"]
            if (r.get("verify") or {}).get("passed"):
                verified.add(strategy)
            comp = r.get("compile", {})
            if strategy == "optimal":
                decision = (comp.get("dropin") or {}).get("decision") or {}
            rounds = (r.get("bench") or {}).get("ms_rounds") or []
            if rounds and not (r.get("bench") or {}).get("failed"):
                timed[strategy] = Timed(
                    statistics.median(rounds),
                    min(rounds),
                    max(rounds),
                    bool(comp.get("warp_specialize_ops")),
                    comp.get("binary"),
                )
            else:
                failed[strategy] = _why_not(r)
        out.append(ConfigRow(kernel, config, timed, failed, decision, frozenset(verified)))
    return out


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


def table(rows: list[ConfigRow]) -> list[str]:
    head = "| config | stock ms | none | heuristic | optimal | opt/stock | stock WS | opt WS |"
    lines = [head + " rule |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{r.kernel}.{r.config}"]
        for s in STRATEGIES:
            t = r.timed.get(s)
            cells.append(f"{t.ms:.3f}" if t else ("fail" if s in r.failed else "-"))
        x = r.ratio("optimal")
        cells.append(_f(x))
        for s in (STOCK, "optimal"):
            t = r.timed.get(s)
            cells.append("-" if t is None else ("yes" if t.specialized else "no"))
        cells.append(str(r.decision.get("rule", "")))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


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
    results = []
    for path in args.results:  # runs of disjoint configs (e.g. one per kernel family)
        data = json.loads(path.read_text())
        results += data["results"] if isinstance(data, dict) else data
    rows = rows_of(results)
    text = "\n".join(["# Config-space sweep", "", *summary(rows), "", *table(rows), ""])
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The records of ``benchmarks.cpu.configspace_usage`` read back and summarized: spills
against stock's, the model's register estimate against ptxas, errors, shared memory, the
strategies' counts (``python -m benchmarks.cpu.configspace_usage --summary FILE...``)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

STRATEGIES: tuple[str, ...] = ("builtin", "none", "heuristic", "optimal", "triton")
TARGETS: dict[str, int] = {"sm90": 90, "sm100": 100}
REGISTER_CAP = 255  # ptxas's maximum registers per thread


def record_key(rec: dict) -> tuple:
    return (rec["kind"], rec["config"], rec["target"], rec["triton"], rec.get("strategy"))


def read_records(paths: Iterable[Path]) -> list[dict]:
    """Every record of the files; a torn last line (a killed run) is skipped."""
    out = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


# -- the summary ----------------------------------------------------------------------------------
def spills(rec: dict) -> bool | None:
    """Whether ptxas spilled (stack or spill stores); None without a ptxas report."""
    p = rec.get("ptxas")
    if not p:
        return None
    return bool(p.get("stack_bytes") or p.get("spill_store_bytes"))


def _latest(records: list[dict]) -> dict[tuple, dict]:
    """The last record per key (a rerun's record replaces an earlier one)."""
    return {record_key(r): r for r in records if "kind" in r}


def spill_regressions(records: list[dict], ours: str = "optimal", stock: str = "builtin") -> list:
    """(config, target, triton, ours' ptxas, stock's ptxas) where ours spills and stock not."""
    latest = _latest(records)
    out = []
    for (kind, config, target, version, strategy), rec in sorted(latest.items()):
        if kind != "compile" or strategy != ours or not spills(rec):
            continue
        base = latest.get(("compile", config, target, version, stock))
        if base is not None and spills(base) is False:
            out.append((config, target, version, rec["ptxas"], base["ptxas"]))
    return out


def spills_without_stock(
    records: list[dict], ours: str = "optimal", stock: str = "builtin"
) -> list[tuple[str, str, str]]:
    """(config, target, triton) where ours spills and stock's compile failed."""
    latest = _latest(records)
    out = []
    for (kind, config, target, version, strategy), rec in sorted(latest.items()):
        if kind == "compile" and strategy == ours and spills(rec):
            base = latest.get(("compile", config, target, version, stock))
            if base is not None and not base.get("ok"):
                out.append((config, target, version))
    return out


def error_counts(records: list[dict]) -> dict[tuple[str, str, str, str], int]:
    """(triton, target, strategy, first diagnostic) -> failed compiles, most frequent first."""
    out: dict[tuple[str, str, str, str], int] = {}
    for (kind, _, target, version, strategy), rec in _latest(records).items():
        if kind == "compile" and not rec.get("ok"):
            key = (version, target, strategy, rec.get("error_detail") or rec.get("error", "?"))
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0][:3], -kv[1])))


def shared_memory_check(
    records: list[dict], strategies: tuple[str, ...] = ("builtin", "none")
) -> dict[tuple[str, str, str], dict]:
    """Per (triton, target, strategy): kernels whose shared memory exceeds what a CTA may
    take (they would not launch) and the estimate's ratio to Triton's allocation."""
    from corpus.configspace import SMEM_LIMIT, space

    estimate = {e.key: e.smem_estimate for e in space()}
    rows: dict[tuple[str, str, str], list] = {}
    for (kind, config, target, version, strategy), rec in _latest(records).items():
        actual = rec.get("shared_bytes")
        if kind != "compile" or strategy not in strategies or not actual or config not in estimate:
            continue
        rows.setdefault((version, target, strategy), []).append((estimate[config], actual))
    out = {}
    for key in sorted(rows, key=lambda k: _row_order((k, None))):
        pairs = rows[key]
        ratios = [e / a for e, a in pairs]
        out[key] = {
            "n": len(pairs),
            "over_limit": sum(a > SMEM_LIMIT for _, a in pairs),
            "ratio_median": round(statistics.median(ratios), 2),
            "ratio_min": round(min(ratios), 2),
        }
    return out


def _row_order(item: tuple) -> tuple:
    (version, target, strategy), _ = item
    rank = STRATEGIES.index(strategy) if strategy in STRATEGIES else len(STRATEGIES)
    return (tuple(int(x) for x in version.split(".") if x.isdigit()), TARGETS.get(target, 0), rank)


def model_agreement(records: list[dict], unspecialized: str = "none") -> dict:
    """The model's unspecialized registers vs ptxas on the unspecialized (`none`) kernel:
    spill / no spill agreement (predicted > 255 vs ptxas stack > 0) and the register error
    where ptxas stayed under its cap."""
    latest = _latest(records)
    pairs = []
    for (kind, config, target, version, _), rec in latest.items():
        pred = rec.get("predicted_max")
        if kind != "model" or pred is None:
            continue
        comp = latest.get(("compile", config, target, version, unspecialized))
        if comp is None or comp.get("warp_specialize_ops") or spills(comp) is None:
            continue
        regs = comp["ptxas"]["registers"]
        pairs.append((pred, regs, spills(comp), target, config, version))
    confusion = {"tp": 0, "tn": 0, "fp": 0, "fn": 0}
    errors = []
    for pred, regs, spilled, *_ in pairs:
        predicted = pred > REGISTER_CAP
        confusion[("t" if predicted == spilled else "f") + ("p" if predicted else "n")] += 1
        if regs < REGISTER_CAP:
            errors.append(abs(pred - regs))
    n = len(pairs)
    agree = confusion["tp"] + confusion["tn"]
    return {
        "n": n,
        "agree": agree,
        "agreement": round(agree / n, 3) if n else None,
        **confusion,
        "n_register_error": len(errors),
        "register_error_median": statistics.median(errors) if errors else None,
        "register_error_p90": percentile(errors, 90) if errors else None,
        "disagreements": sorted(
            (c, t, v, p, r, s) for p, r, s, t, c, v in pairs if (p > REGISTER_CAP) != s
        ),
    }


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]


def strategy_counts(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    """Per (triton, target, strategy): compiled, errors, specialized, spill, serialized."""
    out: dict[tuple[str, str, str], dict] = {}
    for (kind, _, target, version, strategy), rec in sorted(_latest(records).items()):
        if kind != "compile":
            continue
        row = out.setdefault(
            (version, target, strategy),
            {"n": 0, "errors": 0, "ws": 0, "spill": 0, "serialized": 0, "no_ptxas": 0},
        )
        row["n"] += 1
        if not rec.get("ok"):
            row["errors"] += 1
            continue
        row["ws"] += bool(rec.get("warp_specialize_ops"))
        if spills(rec) is None:
            row["no_ptxas"] += 1
            continue
        row["spill"] += bool(spills(rec))
        row["serialized"] += bool(rec["ptxas"].get("wgmma_serialized"))
    return out


def summary(records: list[dict]) -> str:
    latest = _latest(records)
    lines = []
    configs: dict[tuple[str, str], set] = {}
    for _kind, config, target, version, _ in latest:
        configs.setdefault((version, target), set()).add(config)
    lines.append("## Configurations measured (config × target with any record)")
    for (version, target), keys in sorted(configs.items()):
        lines.append(f"- Triton {version} {target}: {len(keys)}")
    lines.append("")
    lines.append("## Per strategy (ptxas -v on the PTX)")
    lines.append("| Triton | target | strategy | n | errors | specialized | spill | serialized |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for (version, target, strategy), r in sorted(strategy_counts(records).items(), key=_row_order):
        lines.append(
            f"| {version} | {target} | {strategy} | {r['n']} | {r['errors']} | {r['ws']} "
            f"| {r['spill']} | {r['serialized']} |"
        )
    lines.append("")
    errors = error_counts(records)
    if errors:
        lines.append("")
        lines.append("Compile errors (Triton, target, strategy: count × first diagnostic):")
        lines.extend(f"- {v} {t} {s}: {n} × {msg}" for (v, t, s, msg), n in errors.items())
    lines.append("")
    regress = spill_regressions(records)
    lines.append(f"## `optimal` spills where stock (`builtin`) does not: {len(regress)}")
    if regress:
        lines.append("| config | target | Triton | optimal (ptxas) | stock (ptxas) |")
        lines.append("|---|---|---|---|---|")
        for config, target, version, ours, stock in regress:
            lines.append(f"| {config} | {target} | {version} | {_usage(ours)} | {_usage(stock)} |")
    unmatched = spills_without_stock(records)
    lines.append("")
    lines.append(
        f"`optimal` spills where stock did not compile (no stock kernel): {len(unmatched)}"
    )
    lines.extend(f"- {c} {t} {v}" for c, t, v in unmatched)
    lines.append("")
    lines.append("## Model vs ptxas, the unspecialized kernel (`none`)")
    by_version: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        by_version.setdefault((r.get("triton", "?"), r.get("target", "?")), []).append(r)
    lines.append(
        "| Triton | target | n | spill agreement | tp | tn | fp | fn "
        "| n (ptxas < 255) | reg. error median | p90 |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for (version, target), recs in sorted(by_version.items()):
        a = model_agreement(recs)
        if not a["n"]:
            continue
        lines.append(
            f"| {version} | {target} | {a['n']} | {a['agree']}/{a['n']} ({a['agreement']}) "
            f"| {a['tp']} | {a['tn']} | {a['fp']} | {a['fn']} | {a['n_register_error']} "
            f"| {a['register_error_median']} | {a['register_error_p90']} |"
        )
    lines.append("")
    lines.append("## Shared memory: the generator's estimate vs the compiled kernel's")
    lines.append(
        "| Triton | target | strategy | n | over the limit | estimate/actual median | min |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for (version, target, strategy), row in shared_memory_check(records).items():
        lines.append(
            f"| {version} | {target} | {strategy} | {row['n']} | {row['over_limit']} "
            f"| {row['ratio_median']} | {row['ratio_min']} |"
        )
    dis = model_agreement(records)["disagreements"]
    if dis:
        lines.append("")
        lines.append("Disagreements (config, target, Triton: predicted, ptxas registers, spilled):")
        lines.extend(
            f"- {c} {t} {v}: predicted {p}, ptxas {r}, spilled {s}" for c, t, v, p, r, s in dis
        )
    return "\n".join(lines) + "\n"


def _usage(p: dict) -> str:
    spilled = max(p.get("stack_bytes") or 0, p.get("spill_store_bytes") or 0)
    text = f"{p.get('registers')} regs, {spilled} B spilled"
    return text + (", wgmma serialized" if p.get("wgmma_serialized") else "")

"""The whole-space census's table: per family x target x Triton version, where the drop-in's
`optimal` kernel spills and stock's kernel does not, with stock's kernel a candidate only
where it is one: built, launchable (the first census's `summary.launchable`: a block's shared
memory, the drop-in's unlaunchable tests) and not rejected by the decision check's defect
test (`toolchain/stock_defects`: a consumer group computing with another tile's rows, wrong
by 0.29 on the H100). Spills: the binary Triton built (its cubin's stack).

    python3 summary_all.py FILE [FILE ...]
"""

import sys
from collections import Counter, defaultdict
from pathlib import Path

FIRST_CENSUS = Path(__file__).resolve().parent.parent / "2026-12-07-stock-candidate-census"
sys.path.insert(0, str(FIRST_CENSUS))
from summary import launchable, load, spilled  # noqa: E402


def stock_rejected(optimal: dict | None) -> str:
    """Why the decision check found stock's built kernel no candidate ('' if it did not)."""
    builds = ((optimal or {}).get("decision") or {}).get("builds") or {}
    stock = builds.get("stock") or {}
    reason = stock.get("reason") or ""
    return reason if stock.get("status") == "error" and "stock's kernel:" in reason else ""


def classify(v: dict) -> str:
    """One configuration: 'finding' (ours spills, stock's candidate does not), 'wrong stock'
    (the same, but stock's kernel is defective), or ''."""
    o, b = v.get("optimal"), v.get("builtin")
    if not (o and o.get("ok") and spilled(o, True) and launchable(b) and not spilled(b, True)):
        return ""
    return "wrong stock" if stock_rejected(o) else "finding"


def why_spills(v: dict) -> str:
    """Where `optimal`'s kernel spills: what stock's kernel is there."""
    b = v.get("builtin")
    if not launchable(b):
        return "stock's kernel not built or not launchable"
    if spilled(b, True):
        return "stock's kernel spills too"
    return "stock's kernel refused (defective)" if stock_rejected(v.get("optimal")) else "finding"


def main(paths: list[str]) -> None:
    groups = load(paths, key=lambda _p, r: (r["family"], r["target"], r["triton"]))
    totals: dict = defaultdict(lambda: defaultdict(int))
    print(
        "| family | target | Triton | configs | stock built | optimal built | optimal spills |"
        " stock's kernel refused by the decision check (over shared or tensor memory /"
        " defective) |"
        " **optimal spills, stock's candidate"
        " does not** |"
    )
    print("|---|---|---|--:|--:|--:|--:|--:|--:|")
    found, wrong = [], []
    for g in sorted(groups, key=lambda g: (g[1], g[2], g[0])):
        by = groups[g]
        kinds = {c: classify(v) for c, v in by.items()}
        reasons = [stock_rejected(v.get("optimal")) for v in by.values()]
        over = sum("memory" in r for r in reasons)  # shared memory, or TMEM columns
        defective = sum(bool(r) and "memory" not in r for r in reasons)
        row = {
            "configs": len(by),
            "stock": sum(bool(v.get("builtin") and v["builtin"].get("ok")) for v in by.values()),
            "opt": sum(bool(v.get("optimal") and v["optimal"].get("ok")) for v in by.values()),
            "spill": sum(
                bool(v.get("optimal") and v["optimal"].get("ok") and spilled(v["optimal"], True))
                for v in by.values()
            ),
            "over": over,
            "defective": defective,
            "finding": sum(k == "finding" for k in kinds.values()),
        }
        for k, n in row.items():
            totals[(g[1], g[2])][k] += n
        found += [f"{c} {g[1]} {g[2]}" for c, k in sorted(kinds.items()) if k == "finding"]
        wrong += [f"{c} {g[1]} {g[2]}" for c, k in sorted(kinds.items()) if k == "wrong stock"]
        print(
            f"| {g[0]} | {g[1]} | {g[2]} | {row['configs']} | {row['stock']} | {row['opt']} |"
            f" {row['spill']} | {row['over']} / {row['defective']} | **{row['finding']}** |"
        )
    for (t, v), row in sorted(totals.items()):
        print(
            f"| **all** | {t} | {v} | {row['configs']} | {row['stock']} | {row['opt']} |"
            f" {row['spill']} | {row['over']} / {row['defective']} | **{row['finding']}** |"
        )
    print()
    print("Where `optimal`'s kernel spills, stock's kernel is:")
    print()
    for g in sorted({(g[1], g[2]) for g in groups}):
        why = Counter(
            why_spills(v)
            for (_f, t, ver), by in groups.items()
            if (t, ver) == g
            for v in by.values()
            if v.get("optimal") and v["optimal"].get("ok") and spilled(v["optimal"], True)
        )
        print(f"- {g[0]} {g[1]}: " + "; ".join(f"{k} {n}" for k, n in sorted(why.items())))
    print()
    print(f"Findings ({len(found)}):" + "".join(f"\n- {x}" for x in found))
    print()
    print(
        f"`optimal` spills where stock's kernel does not but is defective ({len(wrong)}):"
        + "".join(f"\n- {x}" for x in wrong)
    )


if __name__ == "__main__":
    main(sys.argv[1:])

"""Stock Triton's decision beside ws_solver's, from `configspace_usage` records (issue 39).

    python -m benchmarks.analysis.sm100_decisions FILE.jsonl [FILE.jsonl ...]

Per file (one family and Triton version each, as `run-sm100.sh` writes them), the table the
results README shows: whether stock (`builtin`) and ws_solver (`optimal`, through the drop-in
and its decision check) specialized, the rule the decision check named, the plan it kept, and
how many configurations; then the configurations where the two decide differently, each with
the evidence the report named. A configuration counts once both its compiles are recorded.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def load(path: Path) -> dict[str, dict[str, dict]]:
    """config -> strategy -> its last compile record."""
    out: dict[str, dict[str, dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("kind") == "compile":
            out.setdefault(rec["config"], {})[rec["strategy"]] = rec
    return out


def specializes(rec: dict | None) -> str:
    """ "specializes", "does not" or "fails" for one compile record."""
    if rec is None or not rec.get("ok"):
        return "fails"
    return "specializes" if rec.get("warp_specialize_ops") else "does not"


def rows(records: dict[str, dict[str, dict]]) -> list[tuple[str, str, str, str, str, str]]:
    """(config, stock, ours, rule, kept, evidence) for every config with both compiles."""
    out = []
    for config, by in sorted(records.items()):
        if "builtin" not in by or "optimal" not in by:
            continue
        ours = by["optimal"]
        decision = ours.get("decision") or {}
        rule = decision.get("rule") or ("no decision check" if ours.get("ok") else "compile failed")
        kept = decision.get("kept") or ours.get("dropin_strategy") or "-"
        evidence = decision.get("evidence") or ours.get("error") or ""
        out.append((config, specializes(by["builtin"]), specializes(ours), rule, kept, evidence))
    return out


def table(found: list[tuple[str, str, str, str, str, str]]) -> str:
    counts = Counter((stock, ours, rule, kept) for _, stock, ours, rule, kept, _ in found)
    lines = ["| stock | ws_solver (`optimal`) | rule | plan kept | n |", "|---|---|---|---|---|"]
    lines += [f"| {s} | {o} | {r} | {k} | {n} |" for (s, o, r, k), n in sorted(counts.items())]
    return "\n".join(lines)


def differing(found: list[tuple[str, str, str, str, str, str]]) -> list[str]:
    """The configurations where ws_solver and stock decide differently, with their evidence."""
    return [
        f"- `{config}`: stock {stock}, ws_solver {ours} ({rule}): {evidence}"
        for config, stock, ours, rule, _, evidence in found
        if stock != ours
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.files:
        found = rows(load(path))
        diff = differing(found)
        print(f"`{path.name}` ({len(found)} configs, {len(diff)} decided differently):\n")
        print(table(found))
        if diff:
            print("\n" + "\n".join(diff))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

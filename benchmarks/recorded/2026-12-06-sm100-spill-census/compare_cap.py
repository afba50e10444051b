"""The sm_100 census after the mbarrier cap change against the one before: per config, the
`optimal` compile's ok, registers, spill bytes, ws ops, regions, warps, decision, kept and
shared bytes. From the repository root:
    python benchmarks/recorded/2026-12-06-sm100-spill-census/compare_cap.py
"""

import json
from pathlib import Path

HERE = Path("benchmarks/results/2026-12-06-sm100-spill-census")


def optimal(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    return {
        r["config"]: r for r in rows if r.get("kind") == "compile" and r["strategy"] == "optimal"
    }


def key(r: dict) -> tuple:
    p, d = r.get("ptxas") or {}, r.get("decision") or {}
    return (
        r.get("ok"),
        p.get("registers"),
        p.get("spill_store_bytes"),
        r.get("warp_specialize_ops"),
        r.get("partition_regions"),
        r.get("num_warps"),
        d.get("rule"),
        d.get("kept"),
        r.get("shared_bytes"),
    )


for v in ("3.6.0", "3.9.0"):
    before, after = optimal(HERE / f"sm100spill-{v}.jsonl"), optimal(HERE / f"sm100cap-{v}.jsonl")
    both = [c for c in after if c in before]
    diff = [c for c in both if key(before[c]) != key(after[c])]
    print(v, "compared", len(both), "differ", len(diff))
    for c in diff:
        print("  ", c, key(before[c]), "->", key(after[c]))

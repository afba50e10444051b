"""results.md of 2026-12-06-scale-references: `bench_scale_families.compare` of the committed
10 s runs (2026-12-06-partition-descent's `default.jsonl`) against the best known from every
long run so far: the 170 s and 60 s references of 2026-12-04, the 300 s references here and
the 15-30 s runs of 2026-12-06-solver-limits. From the repository root:
    PYTHONPATH=. python benchmarks/recorded/2026-12-06-scale-references/tables.py
"""

import json
from pathlib import Path

from benchmarks.cpu.bench_scale_families import least_ii_proven

RESULTS = Path("benchmarks/results")
HERE = RESULTS / "2026-12-06-scale-references"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


portfolio = RESULTS / "2026-12-04-solver-portfolio"
earlier = [
    r
    for r in rows(RESULTS / "2026-12-04-scale-references-h200" / "reference.jsonl")
    if r["target"] == "sm_100"
]
earlier += [r for r in rows(portfolio / "out-of-sample.jsonl") if r["variant"] == "ref60"]
longer = rows(RESULTS / "2026-12-06-solver-limits" / "limits.jsonl")
runs = {
    "committed, 10 s": rows(RESULTS / "2026-12-06-partition-descent" / "default.jsonl"),
    "references before (170 s; 60 s out of sample)": [{**r, "run": "reference"} for r in earlier],
    "references 300 s (here)": rows(HERE / "references.jsonl"),
    "15-30 s runs (solver-limits)": [{**r, "run": "reference"} for r in longer],
}
committed = runs["committed, 10 s"]


def table(loops: set[str]) -> str:
    """Per loop: the best known II, the runs that reach it, whether its least II is proven,
    and the committed 10 s runs against it."""
    lines = [
        "| loop | ops | best known II | found by | least II proven | committed 10 s, seeds 0-4 "
        "| within 5% |",
        "|---|--:|--:|---|---|---|--:|",
    ]
    near = total = 0
    for loop in sorted(
        loops, key=lambda lp: (next(r["ops"] for r in committed if r["loop"] == lp), lp)
    ):
        solved = [
            (label, r)
            for label, rs in runs.items()
            for r in rs
            if r["loop"] == loop and r["run"] != "heuristic" and r["ii"] is not None
        ]
        best = min(r["ii"] for _, r in solved)
        found = sorted({label for label, r in solved if r["ii"] == best})
        proven = any(r["ii"] == best and least_ii_proven(r) for _, r in solved)
        mine = sorted(
            (r for r in committed if r["loop"] == loop and r["run"] == "default"),
            key=lambda r: r["seed"],
        )
        within = sum(r["ii"] <= 1.05 * best for r in mine)
        near, total = near + within, total + len(mine)
        ops = mine[0]["ops"]
        iis = ", ".join(str(r["ii"]) for r in mine)
        lines.append(
            f"| {loop.removesuffix('.sm100.ttgir')} | {ops} | {best} | {'; '.join(found)} "
            f"| {'yes' if proven else 'no'} | {iis} | {within} |"
        )
    lines += ["", f"Committed 10 s runs within 5% of the best known: {near}/{total}."]
    return "\n".join(lines) + "\n"


loops = {r["loop"] for r in committed if r["run"] == "default"}
sampled = {lp for lp in loops if "attention_unrolled." in lp}
print("## The 16 sm_100 loops of the scale families (in sample)\n")
print(table(loops - sampled))
print("## Out of sample: bench_scale's own family at other tiles and unrolls\n")
print(table(sampled))

"""results.md of 2026-12-06-mbarrier-cap. From the repository root:
    PYTHONPATH=. python benchmarks/recorded/2026-12-06-mbarrier-cap/tables.py

1. The 16 sm_100 scale-family loops and the 4 earlier out-of-sample loops: the 10 s runs
   before (2026-12-06-partition-descent's `default.jsonl`) and after (`default.jsonl` here),
   seeds 0-4, against the best known II over every run so far.
2. Six loops no earlier run has seen (`new-oos.jsonl`; three of them fit no plan): before
   and after, seeds 0-2, and a 60 s run of the new code, against the best known over these
   runs.
"""

import json
from pathlib import Path

from benchmarks.cpu.bench_scale_families import least_ii_proven

RESULTS = Path("benchmarks/results")
HERE = RESULTS / "2026-12-06-mbarrier-cap"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def solved(rs: list[dict]) -> list[dict]:
    return [r for r in rs if r["run"] != "heuristic" and r.get("ii") is not None]


before = [r for r in rows(RESULTS / "2026-12-06-partition-descent" / "default.jsonl")]
after = rows(HERE / "default.jsonl")
longer = [
    *rows(RESULTS / "2026-12-04-scale-references-h200" / "reference.jsonl"),
    *[r for r in rows(RESULTS / "2026-12-04-solver-portfolio" / "out-of-sample.jsonl")],
    *rows(RESULTS / "2026-12-06-solver-limits" / "limits.jsonl"),
    *rows(RESULTS / "2026-12-06-scale-references" / "references.jsonl"),
]
every = solved([*before, *after, *longer])


def best_of(loop: str, runs: list[dict]) -> int:
    return min(r["ii"] for r in runs if r["loop"] == loop)


def seeds(runs: list[dict], loop: str) -> list[dict]:
    mine = [r for r in runs if r["loop"] == loop and r["run"] == "default"]
    return sorted(mine, key=lambda r: r["seed"])


def table(loops: list[str], old: list[dict], new: list[dict], known: list[dict]) -> list[str]:
    lines = [
        "| loop | ops | best known II | before, 10 s | within 5% | after, 10 s | within 5% "
        "| after: least II proven |",
        "|---|--:|--:|---|--:|---|--:|--:|",
    ]
    tally = [0, 0, 0, 0]
    for loop in loops:
        best = best_of(loop, known)
        a, b = seeds(old, loop), seeds(new, loop)
        na = sum(r["ii"] <= 1.05 * best for r in a)
        nb = sum(r["ii"] <= 1.05 * best for r in b)
        proven = sum(least_ii_proven(r) for r in b)
        tally = [tally[0] + na, tally[1] + len(a), tally[2] + nb, tally[3] + len(b)]
        lines.append(
            f"| {loop.removesuffix('.sm100.ttgir')} | {b[0]['ops']} | {best} "
            f"| {', '.join(str(r['ii']) for r in a)} | {na} "
            f"| {', '.join(str(r['ii']) for r in b)} | {nb} | {proven} |"
        )
    lines += ["", f"Within 5%: before {tally[0]}/{tally[1]}, after {tally[2]}/{tally[3]}.", ""]
    return lines


def by_size(loops: set[str], runs: list[dict]) -> list[str]:
    ops = {r["loop"]: r["ops"] for r in runs}
    return sorted(loops, key=lambda lp: (ops[lp], lp))


loops = {r["loop"] for r in after}
sampled = {lp for lp in loops if "attention_unrolled." in lp}
out = ["## The 16 sm_100 loops of the scale families (in sample)", ""]
out += table(by_size(loops - sampled, after), before, after, every)
out += ["## The 4 earlier out-of-sample loops (bench_scale's own family)", ""]
out += table(by_size(sampled, after), before, after, every)
fresh = rows(HERE / "new-oos.jsonl")
old = [r for r in fresh if r["code"] == "before"]
new = [r for r in fresh if r["code"] == "after"]
fits = {r["loop"] for r in solved(fresh)}
out += ["## Six loops no earlier run has seen (seeds 0-2; best known over these runs)", ""]
out += table(by_size(fits, fresh), old, new, solved(fresh))
unfit = sorted({r["loop"] for r in fresh} - fits)
out += [f"No valid plan in either code (the loop does not fit sm_100): {', '.join(unfit)}."]
print("\n".join(out))

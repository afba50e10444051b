"""results.md of 2026-12-06-partition-descent: `bench_scale_families.compare` of the code
before (the committed rows of 2026-12-04-solver-portfolio: default and out-of-sample `new`),
the staged search (`staged.patch`) and the descent as committed, the best known including the
170 s references and the 60 s out-of-sample run. From the repository root:
    PYTHONPATH=. python benchmarks/recorded/2026-12-06-partition-descent/tables.py
"""

import json
from pathlib import Path

from benchmarks.cpu.bench_scale_families import compare

RESULTS = Path("benchmarks/results")
HERE = RESULTS / "2026-12-06-partition-descent"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


portfolio = RESULTS / "2026-12-04-solver-portfolio"
before = [r for r in rows(portfolio / "default.jsonl") if r["target"] == "sm_100"]
before += [r for r in rows(portfolio / "out-of-sample.jsonl") if r["variant"] == "new"]
known = [
    r
    for r in rows(RESULTS / "2026-12-04-scale-references-h200" / "reference.jsonl")
    if r["target"] == "sm_100"
]
known += [r for r in rows(portfolio / "out-of-sample.jsonl") if r["variant"] == "ref60"]
known = [{**r, "run": "reference"} for r in known]
runs = {
    "before": before,
    "staged": rows(HERE / "staged.jsonl"),
    "descent (committed)": rows(HERE / "default.jsonl"),
    "references": known,
}
in_sample = {k: [r for r in v if "attention_unrolled." not in r["loop"]] for k, v in runs.items()}
# d64 u3 (no valid plan: 576 tensor-memory columns) was not run again.
sampled = [r for r in runs["descent (committed)"] if "attention_unrolled." in r["loop"]]
out = {k: [r for r in v if r["loop"] in {s["loop"] for s in sampled}] for k, v in runs.items()}
print("## The 16 sm_100 loops of the scale families (in sample)\n")
print(compare(in_sample))
print("## Out of sample: bench_scale's own family at other tiles and unrolls\n")
print(compare(out))

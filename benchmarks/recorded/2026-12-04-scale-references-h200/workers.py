"""Seed 0 of the named scale loops at 10 deterministic s with 2 and with 4 CP-SAT workers,
one JSON line per run (the rows of bench_scale_families). Run from the repository root:

    PYTHONPATH=. python benchmarks/recorded/2026-12-04-scale-references-h200/workers.py DIR LOOP...
"""

import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

for name in sys.argv[2:]:
    graph, target, base = load(Path(sys.argv[1]) / name)
    for workers in (2, 4):
        row = solve_row(graph, target, "default", 0, 10.0, workers)
        print(json.dumps({**base, **row}), flush=True)

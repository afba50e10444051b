"""Issue 35 variants: PYTHONPATH=. python .devrun/v35.py LOOP VARIANT LIMIT SEED...
VARIANT: base | plateau | busiest | both (descent switches)."""

import importlib
import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

D = importlib.import_module("ws_solver.encode.descent")
path, variant, limit, seeds = (
    Path(sys.argv[1]),
    sys.argv[2],
    float(sys.argv[3]),
    [int(x) for x in sys.argv[4:]],
)
D.PLATEAU = variant in ("plateau", "both")
D.BUSIEST_FIRST = variant in ("busiest", "both")
graph, target, base = load(path)
for seed in seeds:
    row = solve_row(graph, target, "default", seed, limit, 2)
    print(json.dumps({**base, **row, "variant": variant}), flush=True)

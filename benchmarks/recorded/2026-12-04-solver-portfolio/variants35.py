"""Issue 35: solver variants on scale loops, one JSON row per (loop, variant, seed).

    PYTHONPATH=. python .devrun/variants35.py LOOP_PATH VARIANT SEED...
VARIANT: w2 (2 workers), w2_nocore (2 workers, optimizing subsolvers without core),
w2_lnsonly (2 workers, optimizing subsolver no_lp only: the time goes to LNS),
w2_nolp (2 workers, subsolvers core, no_lp, quick_restart_no_lp), w1 (the default).
"""

import importlib
import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

S = importlib.import_module("ws_solver.encode.solve")

path, variant, seeds = Path(sys.argv[1]), sys.argv[2], [int(x) for x in sys.argv[3:]]
workers = 2
if variant == "w2_lnsonly":
    S.SUBSOLVERS = ("no_lp",)
elif variant == "w2_nolp":
    S.SUBSOLVERS = ("core", "no_lp", "quick_restart_no_lp")
elif variant.startswith("w2_lnsqr"):
    S.SUBSOLVERS = ("no_lp", "quick_restart_no_lp")
elif variant.startswith("w2_lpfirst"):
    S.SUBSOLVERS = ("max_lp", "no_lp", "quick_restart_no_lp")
elif variant.startswith("w2_nocore"):
    S.SUBSOLVERS = ("no_lp", "quick_restart_no_lp", "max_lp")
elif variant == "w1":
    workers = 1
elif variant == "old":  # the code before 2026-12-04-solver-portfolio: 1 worker, core first
    workers = 1
    S.SUBSOLVERS = ("core", "no_lp", "quick_restart_no_lp", "max_lp")
elif variant in ("new", "ref60"):  # the code as committed
    from ws_solver.core.options import DEFAULT_WORKERS as workers
if variant.endswith("_share95"):
    S.OPTIMIZE_SHARE = 0.95
graph, target, base = load(path)
for seed in seeds:
    if variant == "ref60":  # a longer run: 60 deterministic s
        row = solve_row(graph, target, "default", seed, 60.0, workers)
        row["run"] = "reference"
    else:
        row = solve_row(graph, target, "default", seed, 10.0, workers)
    print(json.dumps({**base, **row, "variant": variant}), flush=True)

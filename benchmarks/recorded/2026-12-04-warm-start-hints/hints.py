"""One 10-deterministic-second solve (2 workers) of a loop from a given hint, printed with the
hint's II: HINT is "single" (one partition), "heur" (the heuristic's plan) or a pickle from
look.py (its second plan). From the repository root:
    PYTHONPATH=. python hints.py LOOP.ttgir HINT SEED
"""

import importlib
import pickle
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.heuristic import decide
from ws_solver.model.unspecialized import single_partition_plan

S = importlib.import_module("ws_solver.encode.solve")

graph, target, base = load(Path(sys.argv[1]))
kind, seed = sys.argv[2], int(sys.argv[3])
h, why = decide(graph, target, force=True)
if kind == "single":
    hint = single_partition_plan(graph, target)
elif kind == "heur":
    hint = h
else:
    hint = pickle.loads(Path(kind).read_bytes())[1]
r = S.solve(graph, target, hint=hint, budget=SolverBudget(time_limit=10.0, workers=2, seed=seed))
print(kind[-20:], seed, r.hint_ii, "->", r.ii, r.status, round(r.deterministic_time, 2), flush=True)

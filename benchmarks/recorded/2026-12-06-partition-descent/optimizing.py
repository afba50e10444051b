"""Extra CP-SAT parameters on the optimizing solves only (not the refutation):
PYTHONPATH=. python optimizing.py LOOP NAME PARAMS_DICT SEED...
"""

import importlib
import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

S = importlib.import_module("ws_solver.encode.solve")
orig = S.solver_parameters
name, extra = sys.argv[2], eval(sys.argv[3])
subs = extra.pop("SUBSOLVERS", None)
if subs is not None:
    S.SUBSOLVERS = tuple(subs)


def patched(solver, budget, subsolvers=S.SUBSOLVERS):
    orig(solver, budget, subsolvers)
    if budget is not None and subsolvers == S.SUBSOLVERS:
        for k, v in extra.items():
            if isinstance(v, list):
                getattr(solver.parameters, k).extend(v)
            else:
                setattr(solver.parameters, k, v)


S.solver_parameters = patched
graph, target, base = load(Path(sys.argv[1]))
for seed in map(int, sys.argv[4:]):
    row = solve_row(graph, target, "default", seed, 10.0, 2)
    print(json.dumps({**base, **row, "variant": name}), flush=True)

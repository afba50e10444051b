"""Issue 35: the optimizing model without symmetry breaking (the refutation's keeps it), one
JSON row per seed: PYTHONPATH=. python nosym.py LOOP nosym SEED..."""

import importlib
import json
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row
from ws_solver.encode.variables import EncodeOptions

S = importlib.import_module("ws_solver.encode.solve")
variant = sys.argv[2]
orig = S.encode


def enc(graph, target, options=None, deadline=None):
    o = options or EncodeOptions()
    if o.symmetry_order == "heaviest":
        o = replace(o, symmetry_breaking=True)
    elif variant == "nosym":
        o = replace(o, symmetry_breaking=False)
    return orig(graph, target, o, deadline) if deadline is not None else orig(graph, target, o)


S.encode = enc
graph, target, base = load(Path(sys.argv[1]))
for seed in map(int, sys.argv[3:]):
    row = solve_row(graph, target, "default", seed, 10.0, 2)
    print(json.dumps({**base, **row, "variant": variant}), flush=True)

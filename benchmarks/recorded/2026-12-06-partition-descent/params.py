"""Issue 35: CP-SAT parameter variants (VARIANTS, "+" combines) on every search of `solve`,
one JSON row per seed: PYTHONPATH=. python params.py LOOP VARIANT SEED..."""

import importlib
import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

S = importlib.import_module("ws_solver.encode.solve")
VARIANTS = {
    "base": {},
    "lnsdl03": {"lns_initial_deterministic_limit": 0.3},
    "lnsdl1": {"lns_initial_deterministic_limit": 1.0},
    "diff02": {"lns_initial_difficulty": 0.2},
    "divers": {"diversify_lns_params": True},
    "nolbrelax": {"use_lb_relax_lns": False},
    "ls1": {"num_violation_ls": 1},
    "norins": {"use_rins_lns": False},
    "w4": {"num_workers": 4},
    "w8": {"num_workers": 8},
}
path, variant, seeds = Path(sys.argv[1]), sys.argv[2], [int(x) for x in sys.argv[3:]]
extra = {}
for part in variant.split("+"):
    extra.update(VARIANTS[part])
orig = S.solver_parameters


def patched(solver, budget, subsolvers=S.SUBSOLVERS):
    orig(solver, budget, subsolvers)
    if budget is not None and subsolvers is not None:
        for k, v in extra.items():
            setattr(solver.parameters, k, v)


S.solver_parameters = patched
graph, target, base = load(path)
for seed in seeds:
    row = solve_row(graph, target, "default", seed, 10.0, 2)
    print(json.dumps({**base, **row, "variant": variant}), flush=True)

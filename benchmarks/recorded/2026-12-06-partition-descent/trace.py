"""The first phase of `solve` step by step (each optimizing search and refutation: its limit,
status, II, deterministic time), then the run's II: PYTHONPATH=. python trace.py LOOP SEED..."""

import importlib
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

S = importlib.import_module("ws_solver.encode.solve")
om, orf = S._minimize_ii, S.refute_ii


def m(enc, budget, **kw):
    s, st, f = om(enc, budget, **kw)
    ii = s.value(enc.ii) if st in (2, 4) else None
    dt, bound = round(s.deterministic_time, 2), s.best_objective_bound
    print("min", budget.time_limit, s.status_name(st), ii, dt, bound, f, flush=True)
    return s, st, f


def r(enc, least, budget):
    a, s = orf(enc, least, budget)
    ii = s.value(enc.ii) if a in (2, 4) else None
    dt = round(s.deterministic_time, 2)
    print("refute", least, budget.time_limit, s.status_name(a), ii, dt, flush=True)
    return a, s


S._minimize_ii, S.refute_ii = m, r
graph, target, base = load(Path(sys.argv[1]))
for seed in map(int, sys.argv[2:]):
    row = solve_row(graph, target, "default", seed, 10.0, 2)
    print(seed, row["ii"], row["status"], flush=True)

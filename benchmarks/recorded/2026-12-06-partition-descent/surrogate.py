"""Issue 35: the first phase minimizes II * K + sum of the partitions' busy times (II first),
one JSON row per seed: PYTHONPATH=. python surrogate.py LOOP sumbusy SEED..."""

import importlib
import json
import math
import sys
from pathlib import Path

from ortools.sat.python import cp_model
from ortools.sat.python.cp_model import LinearExpr

from benchmarks.cpu.bench_scale_families import load, solve_row

S = importlib.import_module("ws_solver.encode.solve")
path, variant, seeds = Path(sys.argv[1]), sys.argv[2], [int(x) for x in sys.argv[3:]]


class Lex:
    def __init__(self, solver, k):
        self.s, self.k = solver, k

    def __getattr__(self, name):
        return getattr(self.s, name)

    @property
    def best_objective_bound(self):
        b = self.s.best_objective_bound
        return math.floor(b / self.k) if math.isfinite(b) else b


def surrogate(enc):
    if variant == "sumbusy":
        return LinearExpr.sum(enc.busy)
    if variant == "sumsq":  # not linear; skip
        raise SystemExit
    raise SystemExit(variant)


def _minimize_ii(enc, budget):
    solver = cp_model.CpSolver()
    S.solver_parameters(solver, budget, S.subsolvers_for(enc.target))
    k = sum(v.proto.domain[-1] for v in enc.busy) + 1
    enc.model.minimize(enc.ii * k + surrogate(enc))
    first = S._FirstSolution()
    status = solver.solve(enc.model, first)
    return Lex(solver, k), status, first.at


if variant != "base":
    S._minimize_ii = _minimize_ii
graph, target, base = load(path)
for seed in seeds:
    row = solve_row(graph, target, "default", seed, 10.0, 2)
    print(json.dumps({**base, **row, "variant": variant}), flush=True)

"""Trace the descent from a 7.2 s optimizing solve (needs plateau.patch).

PYTHONPATH=. python .devrun/trace35.py LOOP VARIANT SEED DESCENT_S
"""

import importlib
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode

S = importlib.import_module("ws_solver.encode.solve")
D = importlib.import_module("ws_solver.encode.descent")

path, variant, seed, extra = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
D.PLATEAU = variant in ("plateau", "both")
D.BUSIEST_FIRST = variant in ("busiest", "both")
graph, target, base = load(path)
hint, _ = S.default_hint(graph, target)
enc = encode(graph, target, None)
S.add_hint(enc, hint)
budget = SolverBudget(10.0, 2, seed)
best, status, _ = S._minimize_ii(enc, budget.limited(7.2))
print("start", best.value(enc.ii), "bound", best.best_objective_bound, flush=True)
orig = D._lower
t0 = [0.0]


def traced(enc_, current, free, standing, step, configure):
    solver, st = orig(enc_, current, free, standing, step, configure)
    t0[0] += solver.deterministic_time
    if st in (2, 4):
        print(
            f"{t0[0]:6.2f} free={free} ii={solver.value(enc.ii)} "
            f"loads={sorted((solver.value(b) for b in enc.busy), reverse=True)}",
            flush=True,
        )
    return solver, st


D._lower = traced
lower, used = D.descend(enc, best, budget.limited(extra), S._descent_parameters)
print("end", (lower or best).value(enc.ii), "spent", used)

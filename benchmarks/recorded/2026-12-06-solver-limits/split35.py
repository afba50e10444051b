"""Optimize II with the tcgen05 serial stall forbidden.

PYTHONPATH=. python .devrun/split35.py LOOP SEED SECONDS
"""

import importlib
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode

S = importlib.import_module("ws_solver.encode.solve")
path, seed, secs = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
graph, target, base = load(path)
hint, _ = S.default_hint(graph, target)
enc = encode(graph, target, None)
S.add_hint(enc, hint)
names = {v.name: i for i, v in enumerate(enc.model.proto.variables)}
lit = enc.model.get_int_var_from_proto_index(names["tcgen05_serial"])
enc.model.add(lit == 0)
best, status, first = S._minimize_ii(enc, SolverBudget(10.0, 2, seed).limited(secs))
print(
    path.name,
    "seed",
    seed,
    "status",
    best.status_name(status),
    "ii",
    best.value(enc.ii) if status in (2, 4) else None,
    "bound",
    best.best_objective_bound,
    "first",
    first,
    "det",
    best.deterministic_time,
    flush=True,
)

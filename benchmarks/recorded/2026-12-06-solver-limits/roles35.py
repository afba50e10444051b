"""Optimize II with all tcgen05 MMAs in one partition and the serial stall forbidden.
PYTHONPATH=. python .devrun/roles35.py LOOP SEED SECONDS [loads]"""

import importlib
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode
from ws_solver.model.kinds import NodeKind

S = importlib.import_module("ws_solver.encode.solve")
path, seed, secs = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
graph, target, base = load(path)
hint, _ = S.default_hint(graph, target)
enc = encode(graph, target, None)
S.add_hint(enc, hint)
names = {v.name: i for i, v in enumerate(enc.model.proto.variables)}
enc.model.add(enc.model.get_int_var_from_proto_index(names["tcgen05_serial"]) == 0)
mmas = [n.id for n in graph.nodes if n.kind == NodeKind.MMA]
groups = [mmas] + (
    [[n.id for n in graph.nodes if n.kind == NodeKind.LOAD]] if "loads" in sys.argv else []
)
for g in groups:
    first = g[0]
    for m in g[1:]:
        for p in range(enc.partitions):
            if (m, p) in enc.x and (first, p) in enc.x:
                enc.model.add(enc.x[m, p] == enc.x[first, p])
best, status, first = S._minimize_ii(enc, SolverBudget(10.0, 2, seed).limited(secs))
print(
    path.name,
    "seed",
    seed,
    sys.argv[4:],
    best.status_name(status),
    best.value(enc.ii) if status in (2, 4) else None,
    "first",
    first,
    flush=True,
)

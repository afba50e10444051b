"""From a solve's plan, move only the loads (everything else fixed), the serial stall forbidden:
PYTHONPATH=. python .devrun/loads35.py LOOP SEED LIMIT"""

import importlib
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode
from ws_solver.encode.decode import fit, plan_values
from ws_solver.model.cost import evaluate
from ws_solver.model.kinds import NodeKind

S = importlib.import_module("ws_solver.encode.solve")
path, seed, limit = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
graph, target, base = load(path)
res = S.solve(graph, target, budget=SolverBudget(limit, 2, seed))
c = evaluate(res.plan, graph, target)
print("solve", res.ii, "stall", c.stall, flush=True)
for forbid in (True, False):
    enc = encode(graph, target, None)
    vals = dict((v.index, val) for v, val in plan_values(enc, fit(enc, res.plan)))
    S.add_hint(enc, res.plan)
    kinds = {NodeKind.LOAD} | ({NodeKind.MMA} if "--mma" in sys.argv else set())
    loads = {n.id for n in graph.nodes if n.kind in kinds}
    for (n, _p), x in enc.x.items():
        if n not in loads:
            enc.model.add(x == vals[x.index])
    names = {v.name: i for i, v in enumerate(enc.model.proto.variables)}
    if forbid:
        enc.model.add(enc.model.get_int_var_from_proto_index(names["tcgen05_serial"]) == 0)
    best, status, first = S._minimize_ii(enc, SolverBudget(10.0, 2, seed).limited(5))
    print(
        "forbid" if forbid else "free",
        best.status_name(status),
        best.value(enc.ii) if status in (2, 4) else None,
        "det",
        round(best.deterministic_time, 2),
        flush=True,
    )

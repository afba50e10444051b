"""Which constraint groups stop the stall-free move: from a 10 s plan, the loads' and MMAs'
literals free, the rest fixed, the serial stall forbidden; then the same with one group's
constraints cleared at a time (a deletion filter).
PYTHONPATH=. python .devrun/why35.py LOOP SEED"""

import importlib
import sys
from pathlib import Path

from ortools.sat.python import cp_model

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode
from ws_solver.encode.decode import fit, plan_values
from ws_solver.encode.variables import GROUPS
from ws_solver.model.kinds import NodeKind

S = importlib.import_module("ws_solver.encode.solve")
path, seed = Path(sys.argv[1]), int(sys.argv[2])
graph, target, base = load(path)
res = S.solve(graph, target, budget=SolverBudget(10.0, 2, seed))
print("solve", res.ii, flush=True)
chosen = {n.id for n in graph.nodes if n.kind in (NodeKind.LOAD, NodeKind.MMA)}


def attempt(drop: str | None):
    enc = encode(graph, target, None)
    vals = dict((v.index, val) for v, val in plan_values(enc, fit(enc, res.plan)))
    free = {x.index for (n, _), x in enc.x.items() if n in chosen}
    for x in enc.x.values():
        if x.index not in free:
            enc.model.add(x == vals[x.index])
    names = {v.name: i for i, v in enumerate(enc.model.proto.variables)}
    enc.model.add(enc.model.get_int_var_from_proto_index(names["tcgen05_serial"]) == 0)
    if drop:
        off = enc.model.new_bool_var("off")
        enc.model.add(off == 0)
        for c in enc.groups.get(drop, []):
            c.only_enforce_if(off)
    enc.model.minimize(enc.ii)
    solver = cp_model.CpSolver()
    S.solver_parameters(solver, SolverBudget(3.0, 1, seed), ("default_lp",))
    st = solver.solve(enc.model)
    return solver.status_name(st), (solver.value(enc.ii) if st in (2, 4) else None)


print("none dropped", attempt(None), flush=True)
for g in GROUPS:
    if g in ("assignment", "ii", "busy"):
        continue
    print(g, attempt(g), flush=True)

"""From a 10 s solve's plan: free the literals of every load and MMA (and so whatever shares
their literals), fix the rest, forbid the serial stall (or not), minimize II.
PYTHONPATH=. python .devrun/free35.py LOOP SEED SECONDS"""

import importlib
import sys
from pathlib import Path

from ortools.sat.python import cp_model

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode
from ws_solver.encode.decode import fit, plan_values
from ws_solver.model.kinds import NodeKind

S = importlib.import_module("ws_solver.encode.solve")
path, seed, secs = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
graph, target, base = load(path)
res = S.solve(graph, target, budget=SolverBudget(10.0, 2, seed))
print("solve", res.ii, flush=True)
for kinds in ({NodeKind.LOAD, NodeKind.MMA}, {NodeKind.LOAD}):
    for forbid in (True, False):
        enc = encode(graph, target, None)
        vals = dict((v.index, val) for v, val in plan_values(enc, fit(enc, res.plan)))
        S.add_hint(enc, res.plan)
        chosen = {n.id for n in graph.nodes if n.kind in kinds}
        free = {x.index for (n, p), x in enc.x.items() if n in chosen}
        for x in enc.x.values():
            if x.index not in free:
                enc.model.add(x == vals[x.index])
        names = {v.name: i for i, v in enumerate(enc.model.proto.variables)}
        if forbid:
            enc.model.add(enc.model.get_int_var_from_proto_index(names["tcgen05_serial"]) == 0)
        enc.model.minimize(enc.ii)
        solver = cp_model.CpSolver()
        S.solver_parameters(solver, SolverBudget(secs, 1, seed), ("default_lp",))
        st = solver.solve(enc.model)
        print(
            sorted(k.name for k in kinds),
            "forbid" if forbid else "free",
            solver.status_name(st),
            solver.value(enc.ii) if st in (2, 4) else None,
            "free literals",
            len(free),
            "det",
            round(solver.deterministic_time, 2),
            flush=True,
        )

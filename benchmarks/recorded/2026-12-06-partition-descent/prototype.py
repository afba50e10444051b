"""The prototype of the partition descent, run after a whole `solve` of LOOP (PRE
deterministic s, 2 workers, SEED): re-solve the nodes of 2 or 3 partitions (or 2 and an
unused one) with the rest fixed, 0.5 deterministic s each, on a model without symmetry
breaking, first improvement, until no set improves or LNS_DET seconds are spent.
With --lns-only the whole solve's optimizing searches run CP-SAT's LNS workers only.

    PYTHONPATH=. python prototype.py LOOP SEED LNS_DET [PRE] [--lns-only]
"""

import importlib
import itertools
import sys
import time
from pathlib import Path

from ortools.sat.python import cp_model

from benchmarks.cpu.bench_scale_families import load
from ws_solver.core.options import SolverBudget
from ws_solver.encode.build import encode
from ws_solver.encode.decode import decode, plan_values
from ws_solver.encode.variables import EncodeOptions
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate

S = importlib.import_module("ws_solver.encode.solve")
_orig = S.solver_parameters
LNS_ONLY = "--lns-only" in sys.argv
args = [a for a in sys.argv[1:] if a != "--lns-only"]


def _patched(solver, budget, subsolvers=S.SUBSOLVERS):
    _orig(solver, budget, subsolvers)
    if LNS_ONLY and budget is not None and subsolvers == S.SUBSOLVERS:
        solver.parameters.use_lns_only = True


S.solver_parameters = _patched
graph, target, base = load(Path(args[0]))
seed, total = int(args[1]), float(args[2])
pre = float(args[3]) if len(args) > 3 else 10.0
r = S.solve(graph, target, budget=SolverBudget(time_limit=pre, workers=2, seed=seed))
plan = r.plan
print("start", r.ii, r.status, round(r.deterministic_time, 2), flush=True)
enc = encode(graph, target, EncodeOptions(symmetry_breaking=False))
spent, it, t0 = 0.0, 0, time.perf_counter()
cur = evaluate(plan, graph, target).ii
while spent < total:
    used = [p.id for p in plan.partitions]
    empty = [p for p in range(enc.partitions) if p >= len(used)]
    subsets = [set(c) for k in (2, 3) for c in itertools.combinations(range(len(used)), k)]
    if empty:
        subsets += [set(c) | {empty[0]} for c in itertools.combinations(range(len(used)), 2)]
    improved = False
    for free in subsets:
        if spent >= total:
            break
        m = enc.model.clone()
        seen = set()
        for var, v in plan_values(enc, plan):
            if var.index not in seen:
                seen.add(var.index)
                m.add_hint(m.get_int_var_from_proto_index(var.index), v)
        for (n, p), x in enc.x.items():
            if p not in free:
                m.add(m.get_int_var_from_proto_index(x.index) == int(p in plan.assignment[n]))
        m.add(m.get_int_var_from_proto_index(enc.ii.index) < cur)
        m.minimize(enc.ii)
        s = cp_model.CpSolver()
        _orig(s, SolverBudget(time_limit=0.5, workers=1, seed=seed), ("default_lp",))
        st = s.solve(m)
        print(sorted(free), s.status_name(st), round(s.deterministic_time, 3), flush=True)
        spent += s.deterministic_time
        it += 1
        if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            new = decode(enc, s.value)
            if check_plan(new, graph, target):
                print("invalid", check_plan(new, graph, target)[:2])
                continue
            ii = evaluate(new, graph, target).ii
            if ii < cur:
                plan, cur, improved = new, ii, True
                wall = time.perf_counter() - t0
                print(f"it {it} F {sorted(free)} -> {ii} at det {spent:.2f} wall {wall:.1f}")
                break
    if not improved:
        print("local optimum", cur, "det", round(spent, 2))
        break
print("end", cur, round(spent, 2), it, round(time.perf_counter() - t0, 1))

import dataclasses
import sys
from pathlib import Path

from benchmarks.cpu import bench_scale_families as B
from ws_solver.core.options import SolverBudget
from ws_solver.encode.solve import solve
from ws_solver.model.cost import evaluate

path, cap, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
graph, target, base = B.load(path)
target = dataclasses.replace(target, max_mbarriers=cap)
r = solve(graph, target, budget=SolverBudget(10.0, 2, seed))
c = evaluate(r.plan, graph, target)
print(
    "ii",
    r.ii,
    "channels",
    len(r.plan.channels),
    "barriers",
    sum(2 * ch.depth for ch in r.plan.channels),
    "depths",
    sorted(ch.depth for ch in r.plan.channels),
    "smem",
    c.shared_memory,
    "stall",
    c.stall,
)

"""Show the plan of one 20 s solve: PYTHONPATH=. python .devrun/plans35.py LOOP SEED LIMIT"""

import collections
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.model.cost import evaluate
from ws_solver.pipeline.partition import SolveOptions, plan_loop

path, seed, limit = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
graph, target, base = load(path)
plan, reason, d = plan_loop(
    graph,
    target,
    "optimal",
    SolveOptions(
        time_limit=limit, workers=2, seed=seed, cache=False, margin=None, wall_clock=False
    ),
)
c = evaluate(plan, graph, target)
print("II", c.ii, "bound_by", c.bound_by, "stall", c.stall, "terms", c.terms)
for part, pc in zip(plan.partitions, c.partitions, strict=True):
    kinds = collections.Counter(graph.nodes[n].kind.name for n in plan.nodes_in(part.id))
    print(part.id, "warps", part.warps, "regs", part.registers, pc, dict(kinds.most_common(12)))
print("channels", len(plan.channels), "tmem", c.tensor_memory_columns, "smem", c.shared_memory)

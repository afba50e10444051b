"""The heuristic's plan and an `optimal` plan of a loop at SECS deterministic seconds (2 workers,
seed 0), pickled to /tmp/s35/<loop>.<secs>.pkl for hints.py. From the repository root:
    PYTHONPATH=. python look.py .devrun/loops/attention_unrolled_d32.u5.sm100.ttgir 40
"""

import pickle
import sys
import time
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load
from ws_solver.heuristic import decide
from ws_solver.model.cost import evaluate
from ws_solver.pipeline.partition import SolveOptions, plan_loop

path = Path(sys.argv[1])
secs = float(sys.argv[2])
graph, target, base = load(path)
h, why = decide(graph, target)
print(base, why)
t = time.perf_counter()
c = evaluate(h, graph, target)
print("eval s", time.perf_counter() - t, c.ii)
opts = SolveOptions(time_limit=secs, workers=2, seed=0, cache=False, margin=None, wall_clock=False)
plan, reason, details = plan_loop(graph, target, "optimal", opts)
print(reason, details, evaluate(plan, graph, target).ii)
Path(f"/tmp/s35/{path.stem}.{int(secs)}.pkl").write_bytes(pickle.dumps((h, plan)))

"""The committed search with the mbarrier cap raised (code of c7d74ba).

PYTHONPATH=. python .devrun/mbar35.py LOOP CAP LIMIT SEED...
"""

import dataclasses
import json
import sys
from pathlib import Path

from benchmarks.cpu import bench_scale_families as B

cap = int(sys.argv[2])
path, limit, seeds = Path(sys.argv[1]), float(sys.argv[3]), [int(x) for x in sys.argv[4:]]
graph, target, base = B.load(path)
target = dataclasses.replace(target, max_mbarriers=cap)
for seed in seeds:
    row = B.solve_row(graph, target, "default", seed, limit, 2)
    print(json.dumps({**base, **row, "variant": f"mbar{cap}"}), flush=True)

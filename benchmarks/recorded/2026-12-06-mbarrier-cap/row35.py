"""One `optimal` row: PYTHONPATH=CODE python row35.py LOOP SEED LIMIT LABEL"""

import json
import sys
from pathlib import Path

from benchmarks.cpu.bench_scale_families import load, solve_row

path, seed, limit, label = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
graph, target, base = load(path)
run = "default" if limit == 10 else "reference"
print(
    json.dumps(
        {
            **base,
            **solve_row(graph, target, run, seed, limit, 2),
            "code": label,
            "max_mbarriers": target.max_mbarriers,
        }
    )
)

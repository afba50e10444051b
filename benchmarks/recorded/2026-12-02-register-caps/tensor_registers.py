"""Tensor registers per thread (at 100%) of partition 0 of each specialized plan the probe
built: python tensor_registers.py OUT (the probe's scratch folder), from the repository root."""

import glob
import json
import sys
from pathlib import Path

from ws_solver import ir
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.plan import Plan
from ws_solver.model.resources import register_bytes
from ws_solver.model.target import target_for

seen = set()
for f in sorted(glob.glob(sys.argv[1] + "/*.r0/results.json")):
    for r in json.loads(Path(f).read_text())["results"]:
        ttgir = Path(f"corpus/ttgir-3.9/{r['kernel']}.{r['config']}.sm90.ttgir")
        graphs = build_graphs(ir.parse(ttgir.read_text()))
        for loop in r["compile"].get("dropin", {}).get("loops", []):
            key = (r["kernel"], r["config"], loop["loop"])
            if not loop["specialized"] or key in seen:
                continue
            seen.add(key)
            plan, graph = Plan.from_dict(loop["plan"]), graphs[loop["loop"]]
            table = cost_table(graph, target_for(plan.target, triton="3.9.0"))
            warps = plan.partitions[0].warps
            per_thread = register_bytes(table, plan.nodes_in(0)) / (
                4 * 32 * min(warps, graph.num_warps)
            )
            print(
                f"{r['kernel']} {r['config']} {r['strategy']} loop {loop['loop']}: partition 0 "
                f"{warps} warps, {per_thread:.1f} tensor registers/thread at 100%"
            )

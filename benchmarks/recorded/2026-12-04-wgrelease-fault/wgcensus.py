"""issue 34: which 8-warp sm_90 kernels of the config space does the wgrelease fix change?
Each (config, strategy) is compiled once through the drop-in with the per-warp-group release
off (Triton's own PTX), then the rewrite is run on that PTX twice: with the shared-data pattern
before the fix (no TMA loads) and after it. One JSON line per compile."""

import json
import os
import re
import sys
import tempfile
from multiprocessing import Pool
from pathlib import Path

STRATEGIES = ("optimal", "heuristic", "explore:1", "explore:2", "explore:3")


def one(job):
    family, name, config, strategy = job
    import triton
    from triton.backends.compiler import GPUTarget

    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source
    from ws_solver import ir
    from ws_solver.triton.dropin import switch as dropin
    from ws_solver.triton.rewrites import wgrelease

    row = {"family": family, "config": name, "strategy": strategy}
    try:
        with (
            tempfile.TemporaryDirectory() as cache,
            dropin.partitioner(
                strategy,
                cache_dir=cache,
                cache=False,
                release_per_warp_group=False,
                time_limit=10.0,
            ),
        ):
            k = triton.compile(
                ast_source(family, config),
                target=GPUTarget("cuda", 90, 32),
                options=corpus_kernels.options(config),
            )
        ptx = k.asm["ptx"]
        depth = wgrelease.release_ring_depth(ir.parse(k.asm["ttgir"])) or 0
        new = wgrelease.release_per_warp_group(ptx, 8, depth)[1]
        saved = wgrelease._SHARED_DATA
        wgrelease._SHARED_DATA = re.compile(saved.pattern.split("|cp\\.async\\.bulk")[0])
        old = wgrelease.release_per_warp_group(ptx, 8, depth)[1]
        wgrelease._SHARED_DATA = saved
        row |= {
            "old": old.note(),
            "new": new.note(),
            "changed": old != new,
            "tma_load_in_default": bool(re.search(r"cp\.async\.bulk\.tensor\.\w+\.shared", ptx)),
        }
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return row


if __name__ == "__main__":
    space = json.loads(
        Path("benchmarks/results/2026-12-04-configspace-h200/sweep_configs.json").read_text()
    )
    jobs = [
        (f, n, c, s)
        for f, cs in sorted(space.items())
        for n, c in sorted(cs.items())
        if c["num_warps"] == 8
        for s in STRATEGIES
    ]
    print(len(jobs), "compiles", flush=True)
    with open(sys.argv[1], "w") as out, Pool(int(os.environ.get("PROCS", "15"))) as pool:
        for row in pool.imap_unordered(one, jobs):
            out.write(json.dumps(row) + "\n")
            out.flush()
            if row.get("changed") or row.get("error"):
                print(row, flush=True)
    print("done", flush=True)

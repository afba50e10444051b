"""The next out-of-sample list for the narrowed rule of this run's README (section 3): where
stock splits a 4-warp 128-row tile between two consumer warp groups, ours is one partition at
one CTA per SM by shared memory, with 2 stages, stock's kernel is faster. The space has no
untimed config of that shape left, so this compiles configs outside it (``CANDIDATES``) on
the CPU, stock's and `optimal`'s for sm_90 under the installed Triton, and prints each one's
shape: written before any of them is timed. Usage: python3 two_consumer_candidates.py OUT_DIR
(from the repository root; one Triton version per run)."""

import json
import sys
import tempfile
from pathlib import Path

from benchmarks.common.bench_compile import Job, add_extra_configs, compile_job
from ws_solver.model.target import SM90

TILE = {"BLOCK_M": 128, "GROUP_M": 8, "num_warps": 4}
CANDIDATES = {
    "gemm_tma_indesc": {
        "t128x64x256_w4_s2": {**TILE, "BLOCK_N": 64, "BLOCK_K": 256, "num_stages": 2},
        "t128x64x256_w4_s3": {**TILE, "BLOCK_N": 64, "BLOCK_K": 256, "num_stages": 3},
        "t128x64x128_w4_s2": {**TILE, "BLOCK_N": 64, "BLOCK_K": 128, "num_stages": 2},
    },
    "gemm_persistent_indesc": {
        "t128x64x256_relu_w4_s2": {
            **TILE,
            "BLOCK_N": 64,
            "BLOCK_K": 256,
            "num_stages": 2,
            "ACTIVATION": "relu",
            "FLATTEN": False,
        },
    },
}

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
extra = out / "candidates.json"
extra.write_text(json.dumps(CANDIDATES, indent=1))
add_extra_configs(extra)
rows = []
with tempfile.TemporaryDirectory() as cache:
    for family, configs in CANDIDATES.items():
        for name, config in configs.items():
            row: dict = {"family": family, "name": name, "config": config}
            for strategy in ("builtin", "optimal"):
                _, info = compile_job(Job(family, name, strategy), Path(cache) / strategy, 90)
                keep = (
                    "error",
                    "num_warps",
                    "shared_bytes",
                    "warp_specialize_ops",
                    "partition_warps",
                    "binary",
                )
                row[strategy] = {k: info[k] for k in keep if k in info}
            ours = row["optimal"]
            ctas = (
                SM90.blocks_by_shared_memory(ours["shared_bytes"])
                if ours.get("shared_bytes")
                else None
            )
            row["ours_ctas_per_sm"] = ctas
            stock = row["builtin"]
            row["shape"] = bool(
                not stock.get("error")
                and (stock.get("shared_bytes") or 0) <= SM90.shared_memory_per_cta  # launchable
                and stock.get("warp_specialize_ops")
                and not ours.get("warp_specialize_ops")
                and ctas == 1
                and config["num_stages"] == 2
            )
            rows.append(row)
            print(json.dumps(row), flush=True)
(out / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

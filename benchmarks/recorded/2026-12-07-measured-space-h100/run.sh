#!/usr/bin/env bash
# The GPU machine (an H100, torch 2.11), revision b9d1718; ortools wheels carried in .whl/.
# Triton 3.6.0 (the machine's), then Triton 3.9.0 (slim wheel with its CUDA 13 ptxas, carried
# in two parts: ../shared/tools/slim_triton.sh 3.9.0 "$PWD/.tri"; part00 copied to /tmp/tri by
# the call before). The 165 configs of benchmarks/gpu/measured_space.json, chosen before
# timing; each in fresh Triton and ws_solver caches (--cache-root).
# Triton 3.6:
source benchmarks/gpu/gpu_env.sh || exit 2
python3 -m benchmarks.gpu.bench_measured --space benchmarks/gpu/measured_space.json --part 1/1 \
  --out "$OUT/m36" --jobs 14 --overlap --cache-root /tmp/wsm36 --rounds 3 --batch-ms 25
# Triton 3.9 (another call, .tri/b carried; /tmp/site kept from the first call):
#   export PYTHONPATH=/tmp/site; source benchmarks/gpu/gpu_env.sh; source benchmarks/gpu/gpu_triton39.sh
#   python3 -m benchmarks.gpu.bench_measured ... --out "$OUT/m39" --cache-root /tmp/wsm39 (same options)
# Then, here: python benchmarks/recorded/2026-12-07-measured-space-h100/analysis.py RESULTS...

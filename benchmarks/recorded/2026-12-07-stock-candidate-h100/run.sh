#!/usr/bin/env bash
# The GPU machine (an H100, Triton 3.6.0, torch 2.11), the ortools wheels carried in .whl/:
# run 1 builds every variant in 14 worker processes, verifies and times stock, optimal and
# measured; the second process reads measured's choices from the disk; run 2 repeats the
# timings on the same warm machine (its measured choices come from run 1's records).
source benchmarks/gpu/gpu_env.sh || exit 2
export TRITON_CACHE_DIR=/tmp/tc WS_SOLVER_CACHE_DIR=/tmp/plans
python3 -m benchmarks.gpu.bench_measured --out "$OUT/r1" --jobs 14 > "$OUT/r1.log" 2>&1
python3 -m benchmarks.gpu.bench_measured --out "$OUT/r1" --second-process > "$OUT/r1-second.log" 2>&1
python3 -m benchmarks.gpu.bench_measured --out "$OUT/r2" --jobs 14 > "$OUT/r2.log" 2>&1

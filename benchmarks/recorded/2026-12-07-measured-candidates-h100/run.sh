#!/usr/bin/env bash
# The GPU machine (an H100, torch 2.11); ortools wheels carried in .whl/. Measured mode with a
# wide candidate list over the 165 sm_90 configs of benchmarks/gpu/measured_space.json (chosen
# before timing), each in fresh Triton and ws_solver caches. Usage: run.sh PART (1/2, 2/2) for
# Triton 3.6.0 (the machine's); run.sh PART 39 after gpu_triton39.sh for Triton 3.9.0.
PART=${1:-1/1}
VERSION=${2:-36}
CANDIDATES=${CANDIDATES:-stock,optimal,none,heuristic,triton,explore:1,stock~s+1,optimal~s+1}
if [ "$VERSION" = 36 ]; then source benchmarks/gpu/gpu_env.sh || exit 2; fi
python3 -m benchmarks.gpu.bench_measured --space benchmarks/gpu/measured_space.json \
  --part "$PART" --out "$OUT/m$VERSION" --jobs 14 --overlap --cache-root /tmp/wsm$VERSION \
  --rounds 3 --batch-ms 25 --candidates "$CANDIDATES" --resume --stall-s 90

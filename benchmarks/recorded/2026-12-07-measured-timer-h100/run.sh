#!/usr/bin/env bash
# The GPU machine (an H100, torch 2.11); ortools wheels carried in .whl/. Measured mode with
# its default candidates and its new timer (back-to-back batches, 5 rounds, up to 6 extra
# rounds for a close call: `autotuning.measured`) over the 165 sm_90 configs of
# benchmarks/gpu/measured_space.json (chosen before timing), fresh Triton and ws_solver caches.
# The bench's own timing: 5 interleaved rounds of ~25 ms batches. Usage: run.sh PART for
# Triton 3.6.0 (the machine's); run.sh PART 39 after gpu_triton39.sh for Triton 3.9.0.
PART=${1:-1/1}
VERSION=${2:-36}
if [ "$VERSION" = 36 ]; then source benchmarks/gpu/gpu_env.sh || exit 2; fi
python3 -m benchmarks.gpu.bench_measured --space benchmarks/gpu/measured_space.json \
  --part "$PART" --out "$OUT/m$VERSION" --jobs 14 --overlap --cache-root /tmp/wsm$VERSION \
  --rounds 5 --batch-ms 25 --resume --stall-s 90

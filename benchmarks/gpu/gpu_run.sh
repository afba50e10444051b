#!/usr/bin/env bash
# Verify and time every corpus kernel x config x strategy on the GPU machine, in one go.
#
#   benchmarks/gpu/gpu_run.sh [bench_kernels.py arguments...]      (from the repository root)
#
# Installs the carried wheels (.whl/: ortools and what it needs that the machine lacks) into
# /tmp/site, uses the carried plan cache (.plans/) when there is one, compiles all variants
# in parallel, runs the correctness checks (benchmarks/gpu/verify_gpu.py) and the timings
# (benchmarks/gpu/bench_kernels.py), and leaves results.json, results.md and the logs in $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/bench_out}
mkdir -p "$OUT"
# shellcheck source=benchmarks/gpu/gpu_env.sh
source benchmarks/gpu/gpu_env.sh || exit 2
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  python3 -c 'import ortools; print("ortools", ortools.__version__)'
} >"$OUT/env.txt" 2>&1
python3 -m benchmarks.gpu.bench_kernels --out "$OUT" --cache-root /tmp/ws_bench_cache \
  --parallel "$(nproc)" "$@" 2>&1 | tee "$OUT/log.txt"
exit "${PIPESTATUS[0]}"

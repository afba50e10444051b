#!/usr/bin/env bash
# On the GPU machine, Triton 3.6 (carry .whl): exp.py three times, each with fresh ws_solver
# caches (a fresh tuning), one Triton cache (the later runs load the binaries), the GPU's
# clocks, power and throttle reasons logged every 20 ms beside it.
source benchmarks/gpu/gpu_env.sh || exit 2
mkdir -p "$OUT/mis"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 20 > "$OUT/mis/smi.csv" &
smi=$!
export TRITON_CACHE_DIR=/tmp/mis/triton
for i in 1 2 3; do
  WS_SOLVER_CACHE_DIR=/tmp/mis/ws$i python3 benchmarks/recorded/2026-12-07-power-cap-h100/exp.py \
    "$OUT/mis/run$i.json" > "$OUT/mis/log$i.txt" 2>&1
  tail -3 "$OUT/mis/log$i.txt"
done
kill $smi
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$OUT/mis/smi_q.txt"
cd "$OUT" && tar czf mis.tgz mis && rm -rf mis

#!/usr/bin/env bash
# On the GPU machine, Triton 3.6 (carry .whl): exp.py on gemm_tma_indesc t128x128x128 w4 s2,
# the config where measured mode's pick and the bench disagreed
# (2026-12-07-power-cap-h100), the GPU's clocks, power and throttle reasons logged every
# 20 ms beside it; then the bench (stock, optimal, measured; 100 ms warm-up before each
# batch) on oos_space.json: the configs where ours is unspecialized, stock's kernel
# specialized, one CTA per SM by shared memory and 2 stages (the sm_90 census), none timed
# before, and the one timed before.
source benchmarks/gpu/gpu_env.sh || exit 2
here=$(dirname "$0")
mkdir -p /tmp/ps
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 20 > /tmp/ps/smi.csv &
smi=$!
TRITON_CACHE_DIR=/tmp/ps/triton WS_SOLVER_CACHE_DIR=/tmp/ps/ws python3 $here/exp.py \
  /tmp/ps/run1.json gemm_tma_indesc t128x128x128_w4_s2 > /tmp/ps/log1.txt 2>&1
tail -n 8 /tmp/ps/log1.txt
kill $smi
xz -9 /tmp/ps/smi.csv
python3 -m benchmarks.gpu.bench_measured --space $here/oos_space.json --part 1/1 \
  --out /tmp/ps/oos --jobs 14 --cache-root /tmp/ps/oosc --rounds 5 --batch-ms 25 --stall-s 90 \
  > /tmp/ps/oos.txt 2>&1
tail -n 8 /tmp/ps/oos.txt
tar czf "$OUT/ps.tgz" -C /tmp ps/run1.json ps/log1.txt ps/smi.csv.xz ps/oos ps/oos.txt

#!/usr/bin/env bash
# Which autotune candidate of gemm_tma t128x128x128_w8_s2 faults? One process per candidate.
set -uo pipefail
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
python3 - <<'PY'
import json
space = json.load(open("benchmarks/results/2026-12-04-configspace-h200/sweep_configs.json"))
json.dump({"gemm_tma": {"t128x128x128_w8_s2": space["gemm_tma"]["t128x128x128_w8_s2"]}}, open("/tmp/one.json", "w"))
PY
FINAL=$OUT
for c in heuristic optimal none triton explore:0 explore:1 explore:2 explore:3 "triton~ov0~wg0"; do
  n=$(echo $c | tr ':~' '__')
  ( export OUT=/tmp/fault/$n; mkdir -p $OUT
    timeout 240 benchmarks/gpu/gpu_run.sh --extra-configs /tmp/one.json --only-extra --kernels gemm_tma \
      --strategies autotune --autotune-candidates "$c" --rounds 2 --rep-ms 20 --no-vendor \
      --cache-root /tmp/cache_$n --parallel 2 > /tmp/fault/$n.out 2>&1; echo "$c rc=$?" ) &
  sleep 2
done
wait
for f in /tmp/fault/*.out; do echo "== $f"; grep -E "autotune 1/|Error|error|FAIL|passed|rc=" $f | head -6; done
tar -C /tmp -czf $FINAL/fault34.tgz fault

#!/usr/bin/env bash
# issue 34: the model's next-best plans (explore:1, explore:2, explore:3) over the whole sm_90
# config space (sweep_configs.json, 176 configs) compiled and verified on the H200 (3 seeds
# against the fp32 reference, then 10 launches compared bitwise: verify_gpu.py), one process
# per family so that a launch fault ends one family's run, not the others'.
set -uo pipefail
FINAL=$OUT; R=/tmp/res/explore34; mkdir -p $R
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-031ab06}
for f in gemm_tma gemm_fp8 gemm_persistent attention_fwd; do
  ( export OUT=$R/$f; mkdir -p $OUT
    timeout ${1:-420} benchmarks/gpu/gpu_run.sh --extra-configs benchmarks/results/2026-12-04-configspace-h200/sweep_configs.json --only-extra \
      --kernels $f --strategies explore:1,explore:2,explore:3 --no-bench --parallel 4 \
      --cache-root /tmp/cache_$f > $R/$f.out 2>&1; echo "$f rc=$?" ) &
done
wait
for f in $R/*.out; do echo "== $f"; grep -E "variants|FAILED|Error|error" $f | head -8; done
tar -C /tmp/res -czf $FINAL/explore34.tgz explore34

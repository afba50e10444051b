#!/usr/bin/env bash
# issue 34: the explore:1/2 fault with the wgrelease fix (fault34b.py), then the census of what
# the fix changes over the 8-warp sm_90 configs of the config space (wgcensus.py).
set -uo pipefail
source benchmarks/gpu/gpu_env.sh || exit 2
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site:$PYTHONPATH WS_GIT_REV=${WS_GIT_REV:-63d6c0f+fix}
mkdir -p /tmp/res
(timeout 300 python3 benchmarks/recorded/2026-12-04-wgrelease-fault/wgcensus.py /tmp/res/census.jsonl > /tmp/res/census.log 2>&1) &
export OUT_DIR=/tmp/res/fault; mkdir -p $OUT_DIR
CUDA_LAUNCH_BLOCKING=1 timeout 300 python3 benchmarks/recorded/2026-12-04-wgrelease-fault/fault34b.py
grep -h "per-warp" $OUT_DIR/*/report.json | head -0
for d in $OUT_DIR/*/; do echo "$(basename $d): $(grep -o '"per-warp-group[^"]*"' $d/report.json | head -2 | tr '\n' ' ')"; done
wait
tail -5 /tmp/res/census.log; wc -l /tmp/res/census.jsonl
tar -C /tmp/res --exclude=cache --exclude='*.llir' -czf $OUT/fault34c.tgz .

#!/usr/bin/env bash
# issue 34, the two decision changes of 125d206 measured (Triton 3.6): every configuration they
# change in the sm_90 space (rules.json: the d64 m128n64 `ahead` configs, whose loops are no
# longer specialized, and the configs where the spill check had swapped to a kernel that
# spilled too) under stock, `none` and `optimal`, verified and timed as the sweep.
# The configs: .devrun/rules.json, a copy of the results folder's rules.json. From the
# repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/rules36.sh [LIMIT_S=330]
set -uo pipefail
LIMIT=${1:-330}; FINAL=$OUT; export OUT=/tmp/res/rules36; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-unknown}
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/rules.json --only-extra \
  --kernels attention_fwd,gemm_persistent --strategies builtin,none,optimal \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "issue 34: the configs 125d206's two decision changes change (Triton 3.6)" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/rules36.tgz" rules36

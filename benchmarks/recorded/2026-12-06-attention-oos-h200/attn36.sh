#!/usr/bin/env bash
# issue 34, out of sample: the 81 sm_90 attention_fwd configurations of the config space that
# the sweep (sweep_configs.json: every third attention config) left untimed, under stock
# Triton 3.6 (builtin), `none` and `optimal`, verified and timed exactly as the sweep (4
# balanced interleaved rounds with stock, 40 ms reps). The configurations were fixed by that
# rule before any timing (`.devrun/oos_attention.json`: a copy of the results folder's
# oos_attention.json; .devrun travels ignored, the results folder is left behind to fit the
# 64 MiB transfer). From the repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/attn36.sh [LIMIT_S=540]
# Results: $OUT/attn36.tgz (results.json/md, log.txt, env.txt).
set -uo pipefail
LIMIT=${1:-540}; FINAL=$OUT; export OUT=/tmp/res/attn36; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-unknown}
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/oos_attention.json --only-extra \
  --kernels attention_fwd --strategies builtin,none,optimal \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "issue 34: the 81 attention configs the sweep left untimed (Triton 3.6), out of sample" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
rc=${PIPESTATUS[0]}
echo "rc=$rc in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/attn36.tgz" attn36
exit $rc

#!/usr/bin/env bash
# The six 8-warp 2-stage `ahead` attention configs of the out-of-sample set (s2_ahead.json,
# copied to .devrun/): stock, `none` and `optimal` with and without ws_solver's wgmma wait
# sinking (~ov0), Triton 3.6 (the GPU machine's own), verified and timed as the sweep with 4
# rounds. Question: is d64 m128n128 w8 s2 `ahead` at 0.962x stock (2026-12-06-attention-oos-h200)
# the sinking's cost, and does the sinking pay on the others? From the repository root:
#   benchmarks/recorded/2026-12-06-ahead-s2-sinking/s2sink36.sh [LIMIT_S=220]
set -uo pipefail
LIMIT=${1:-220}; FINAL=$OUT; export OUT=/tmp/res/s2sink36; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-unknown}
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/s2_ahead.json --only-extra \
  --kernels attention_fwd --strategies builtin,none,none~ov0,optimal,optimal~ov0 \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "8-warp 2-stage ahead attention with and without the wgmma wait sinking (Triton 3.6)" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "bench rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/s2sink36.tgz" s2sink36

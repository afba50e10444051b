#!/usr/bin/env bash
# issue 34, the containment checked: the 25 configs of w4sink36.sh with the committed rule (no
# wgmma wait sinking in a one-warp-group kernel), under `none` and `optimal`, verified and
# timed as the sweep (stock Triton 3.6 compiles none of them); then 200 repeated launches of
# the four that failed with the sinking. From the repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/w4fix36.sh [LIMIT_S=300]
# The configs: .devrun/w4_sunk.json, a copy of the results folder's w4_sunk.json.
set -uo pipefail
LIMIT=${1:-300}; FINAL=$OUT; export OUT=/tmp/res/w4fix36; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-unknown}
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/w4_sunk.json --only-extra \
  --kernels attention_fwd --strategies none,optimal --rounds 4 --rep-ms 40 --no-vendor \
  --what "issue 34: 4-warp attention, no wait sinking in one warp group (Triton 3.6)" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "bench rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
specs=""
for c in d128_m128n64_w4_s3_ahead d128_m128n64_w4_s4_ahead causal_d128_m128n64_w4_s3_ahead causal_d128_m128n64_w4_s4_ahead; do
  specs="$specs attention_fwd:$c:none"
done
timeout 120 python3 benchmarks/gpu/repeat_probe.py --configs .devrun/w4_sunk.json $specs 2>&1 | grep -v -E 'Warning|isinstance' | cut -c1-300
echo "done in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/w4fix36.tgz" w4fix36

#!/usr/bin/env bash
# issue 34, the wrong 4-warp `ahead` kernels of attn36.sh: every 4-warp attention config of the
# space (3+ stages) whose loop gets ws_solver's wgmma wait sinking (w4_sunk.json, 25), under
# stock, `none` and `optimal` with and without the sinking (~ov0), verified and timed as the
# sweep; then 200 repeated launches (repeat_probe.py) of the four that failed, with and
# without the sinking. From the repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/w4sink36.sh [LIMIT_S=420]
# The configs: .devrun/w4_sunk.json, a copy of the results folder's w4_sunk.json.
set -uo pipefail
LIMIT=${1:-420}; FINAL=$OUT; export OUT=/tmp/res/w4sink36; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} WS_GIT_REV=${WS_GIT_REV:-unknown}
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/w4_sunk.json --only-extra \
  --kernels attention_fwd --strategies builtin,none,none~ov0,optimal,optimal~ov0 \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "issue 34: 4-warp attention with and without the wgmma wait sinking (Triton 3.6)" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "bench rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
specs=""
for c in d128_m128n64_w4_s3_ahead d128_m128n64_w4_s4_ahead causal_d128_m128n64_w4_s3_ahead causal_d128_m128n64_w4_s4_ahead; do
  specs="$specs attention_fwd:$c:none attention_fwd:$c:none~ov0"
done
timeout 150 python3 benchmarks/gpu/repeat_probe.py --configs .devrun/w4_sunk.json $specs 2>&1 | grep -v Warning | cut -c1-300
echo "done in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/w4sink36.tgz" w4sink36

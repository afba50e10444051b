#!/usr/bin/env bash
# issue 34, out of sample under Triton 3.9: the 81 attention configs of attn36.sh under stock
# Triton 3.9.0 (builtin, with its own CUDA 13 ptxas), `none` and `optimal`, verified and timed
# as the sweep, with the containment committed in 49997e1. The slim Triton 3.9 arrives in two
# parts (benchmarks/gpu/gpu_triton39.sh): an earlier call copies .tri/a/part00 to /tmp/tri and
# another unpacks .ort to /tmp/site; this one carries .tri/b and .devrun. From the repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/attn39.sh [LIMIT_S=480]
set -uo pipefail
LIMIT=${1:-480}; FINAL=$OUT; export OUT=/tmp/res/attn39; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { echo "no /tmp/site/ortools: unpack .ort first" >&2; exit 2; }
source benchmarks/gpu/gpu_env.sh || exit 2
source benchmarks/gpu/gpu_triton39.sh || exit 2
export PYTHONPATH=$PYTHONPATH:/tmp/site WS_GIT_REV=${WS_GIT_REV:-unknown}
python3 -c 'import triton; print("triton", triton.__version__)'
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/oos_attention.json --only-extra \
  --kernels attention_fwd --strategies builtin,none,optimal \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "issue 34: the 81 attention configs the sweep left untimed (Triton 3.9), out of sample" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/attn39.tgz" attn39

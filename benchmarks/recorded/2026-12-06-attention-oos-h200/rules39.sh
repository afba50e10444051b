#!/usr/bin/env bash
# issue 34, the two decision rules of 125d206 under Triton 3.9: the 24 configs of rules36.sh under stock
# Triton 3.9.0 (builtin, with its own CUDA 13 ptxas), `none` and `optimal`, verified and timed
# as the sweep. The slim Triton 3.9 arrives in two
# parts (benchmarks/gpu/gpu_triton39.sh): an earlier call copies .tri/a/part00 to /tmp/tri and
# another unpacks .ort to /tmp/site; this one carries .tri/b and .devrun. From the repository root:
#   benchmarks/recorded/2026-12-06-attention-oos-h200/rules39.sh [LIMIT_S=200]
set -uo pipefail
LIMIT=${1:-200}; FINAL=$OUT; export OUT=/tmp/res/rules39; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { echo "no /tmp/site/ortools: unpack .ort first" >&2; exit 2; }
source benchmarks/gpu/gpu_env.sh || exit 2
source benchmarks/gpu/gpu_triton39.sh || exit 2
export PYTHONPATH=$PYTHONPATH:/tmp/site WS_GIT_REV=${WS_GIT_REV:-unknown}
python3 -c 'import triton; print("triton", triton.__version__)'
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs .devrun/rules.json --only-extra \
  --kernels attention_fwd,gemm_persistent --strategies builtin,none,optimal \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only \
  --what "issue 34: the configs 125d206's two decision rules change (Triton 3.9)" \
  2>&1 | grep --line-buffered -E '^(compil|timing|total|STALLED|[0-9]+ variants|  FAILED|verify)' | grep --line-buffered -v -E '^verify .* ok '
echo "rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
tar -C /tmp/res -czf "$FINAL/rules39.tgz" rules39

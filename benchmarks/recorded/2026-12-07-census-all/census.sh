#!/usr/bin/env bash
# ptxas census of the drop-in's decision (stock's kernel a candidate) over EVERY configuration
# of the config space (corpus.configspace: 12 families, 1,032 configs), at one revision, for
# the targets in TARGETS (default sm90; sm100 after). The two Triton versions at once (one
# process each, one config at a time: the developers' 2-core machine), niced; resumable (a
# rerun skips what the files hold). Then the summary of the first census's summary.py.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/cenall}
TARGETS=${TARGETS:-sm90}
VENVS=${VENVS:-.}
FAMILIES="gemm_tma_indesc gemm_fp8_indesc gemm_persistent_indesc attention_fwd_indesc
  gemm_pointer gemm_fp8_pointer gemm_persistent_pointer attention_fwd_pointer
  gemm_tma gemm_fp8 gemm_persistent attention_fwd"
mkdir -p "$OUT"
git rev-parse --short HEAD >> "$OUT/revision"
one_version() {
  local ver=$1 venv=$2
  for target in $TARGETS; do
    for f in $FAMILIES; do
      WS_SOLVER_CACHE_DIR=$OUT/plans-$ver nice -n 10 $venv/bin/python -m benchmarks.cpu.configspace_usage \
        --out "$OUT/all-$target-$ver.jsonl" --family "$f" --jobs 1 \
        --target $target --strategies builtin,optimal
    done
  done
}
start=$(date +%s)
one_version 3.6.0 "$VENVS/.venv" >> "$OUT/log-3.6.0.txt" 2>&1 &
one_version 3.9.0 "$VENVS/.venv-triton3.9" >> "$OUT/log-3.9.0.txt" 2>&1 &
wait
echo "wall: $(( $(date +%s) - start )) s" | tee -a "$OUT/wall.txt"
python3 benchmarks/recorded/2026-12-07-stock-candidate-census/summary.py --by-family \
  --details "$OUT"/all-*.jsonl > "$OUT/summary.md"

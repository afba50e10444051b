#!/usr/bin/env bash
# ptxas census of the drop-in's decision (stock's kernel a candidate) on the config-space forms
# the first census (2026-12-07-stock-candidate-census) left out: persistent, pointer and
# attention forms, then the host-descriptor GEMMs. A SAMPLE: every 5th config of each family
# in index order (`--every 5`; 5, not 3 or 4, because the names' grid dimensions alternate with
# period 2 and 4, and a stride of 4 would have sampled no `ahead` attention config). The two
# Triton versions run at once (one process each, one config at a time: the 2-core machine),
# each from its venv; resumable (a rerun skips what the files hold). Then the summary.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/cenf}
EVERY=${EVERY:-5}
VENVS=${VENVS:-.}  # where .venv and .venv-triton3.9 are (a worktree: VENVS=/work/main)
FAMILIES="gemm_persistent gemm_persistent_indesc gemm_persistent_pointer gemm_pointer
  gemm_fp8_pointer attention_fwd attention_fwd_indesc attention_fwd_pointer gemm_tma gemm_fp8"
mkdir -p "$OUT"
git rev-parse --short HEAD > "$OUT/revision"
one_version() {
  local ver=$1 venv=$2
  for f in $FAMILIES; do  # the host-descriptor GEMMs last: the brief's "if time allows"
    for target in sm90 sm100; do
      WS_SOLVER_CACHE_DIR=$OUT/plans-$ver $venv/bin/python -m benchmarks.cpu.configspace_usage \
        --out "$OUT/forms-$target-$ver.jsonl" --family "$f" --every "$EVERY" --jobs 1 \
        --target $target --strategies builtin,optimal
    done
  done
}
start=$(date +%s)
one_version 3.6.0 "$VENVS/.venv" > "$OUT/log-3.6.0.txt" 2>&1 &
one_version 3.9.0 "$VENVS/.venv-triton3.9" > "$OUT/log-3.9.0.txt" 2>&1 &
wait
echo "wall: $(( $(date +%s) - start )) s" | tee "$OUT/wall.txt"
python3 benchmarks/recorded/2026-12-07-stock-candidate-census/summary.py --by-family \
  --details "$OUT"/forms-*.jsonl > "$OUT/summary.md"

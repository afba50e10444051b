#!/usr/bin/env bash
# The census (census.sh's) for one target and Triton version on the GPU machine's 16 cores
# (ptxas only, no GPU), 14 configs at a time; stops itself after LIMIT_S seconds and is
# resumable: carry the partial jsonl back in as CARRIED. Usage (repository root, after
# gpu_env.sh, and gpu_triton39.sh for 3.9): gpu_census.sh TARGET VERSION [LIMIT_S] [CARRIED]
set -uo pipefail
TARGET=$1 VER=$2 LIMIT_S=${3:-400} CARRIED=${4:-}
FAMILIES="gemm_tma_indesc gemm_fp8_indesc gemm_persistent_indesc attention_fwd_indesc
  gemm_pointer gemm_fp8_pointer gemm_persistent_pointer attention_fwd_pointer
  gemm_tma gemm_fp8 gemm_persistent attention_fwd"
mkdir -p "$OUT/cen"
file="$OUT/cen/all-$TARGET-$VER.jsonl"
if [ -n "$CARRIED" ] && [ -f "$CARRIED" ]; then cp "$CARRIED" "$file"; fi
whole_lines() {  # a run stopped by timeout may leave half a line: drop it
  [ -f "$file" ] || return 0
  python3 - "$file" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
def ok(line):
    try:
        json.loads(line)
        return True
    except ValueError:
        return False
open(sys.argv[1], "w").write("".join(line + "\n" for line in lines if ok(line)))
PY
}
end=$(( $(date +%s) + LIMIT_S ))
for f in $FAMILIES; do
  left=$(( end - $(date +%s) ))
  [ $left -le 5 ] && break
  WS_SOLVER_CACHE_DIR=/tmp/cen-plans-$VER timeout $left python3 -m benchmarks.cpu.configspace_usage \
    --out "$file" --family "$f" --jobs 14 --target "$TARGET" --strategies builtin,optimal \
    > "$OUT/cen/log-$TARGET-$VER-$f.txt" 2>&1
  whole_lines
done
python3 -c "import triton; print(triton.__version__)" > "$OUT/cen/triton-$TARGET-$VER.txt"
wc -l "$file"

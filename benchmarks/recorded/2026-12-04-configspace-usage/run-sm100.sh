#!/bin/bash
# The sm_100 decisions of ws_solver (`optimal`, through the drop-in and its decision check)
# beside stock Triton's (`builtin`), issue 39 item 3. CPU only (ptxas), resumable: a rerun
# skips what a file holds. Run from SRC, a clean export of the commit named in the README
# (`git archive REV | tar -x -C SRC`). The sample: each family's configurations in
# `corpus.configspace.sample_order` (a fixed hash order), CHUNK at a time per family and
# version in rotation, so a run stopped early holds the first n of each family's order.
# gemm_tma (38) is already covered under both versions (sm100-decisions-gemm_tma-*.jsonl).
# Whole space on a 16-core machine (316 configs x 2 versions; gemm_tma is done):
#   git archive REV | tar -x -C SRC && SRC=SRC TAG=REV VENV_ROOT=/work/main JOBS=16 CHUNK=0 ROUNDS=1 run-sm100.sh
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
RUN="$REPO/benchmarks/results/$(basename "$HERE")"  # where the JSONL goes
SRC=${SRC:-$REPO}
JOBS=${JOBS:-1}
CHUNK=${CHUNK:-4}      # configurations per family and version per round (0: all)
ROUNDS=${ROUNDS:-40}
TAG=${TAG:-b06e183}  # the commit SRC was exported from (file names)
FAMILIES=${FAMILIES:-"gemm_fp8 gemm_persistent attention_fwd"}
VENV_ROOT=${VENV_ROOT:-$REPO}  # where .venv (Triton 3.6) and .venv-triton3.9 are
cd "$SRC" || exit 1
run() {  # venv, version tag, family
  local venv=$1 tag=$2 family=$3
  local limit=()
  [ "$CHUNK" != 0 ] && limit=(--limit "$CHUNK")
  nice -n 10 "$VENV_ROOT/$venv/bin/python" -m benchmarks.cpu.configspace_usage \
    --out "$RUN/sm100-decisions-$family-$TAG-triton$tag.jsonl" --jobs "$JOBS" \
    --family "$family" --target sm100 --strategies builtin,optimal "${limit[@]}"
}
for _ in $(seq 1 "$ROUNDS"); do
  for family in $FAMILIES; do
    run .venv-triton3.9 3.9 "$family"
    run .venv 3.6 "$family"
  done
done

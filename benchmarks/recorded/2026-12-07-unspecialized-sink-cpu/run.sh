#!/usr/bin/env bash
# The 18 attention configs of benchmarks/gpu/measured_space.json with 8 warps and 3+ stages,
# compiled for sm_90 under Triton 3.9 (builtin and optimal) by the code before 7c32090 (a
# worktree at a196cd8: WT_OLD) and after it (this checkout), on the CPU. affected.py compares
# optimal's TTGIR op sequence with stock's. Binaries are compared within a checkout only (the
# cubin carries the source's path).
set -euo pipefail
cd "$(dirname "$0")/../../.."
WT_OLD=${WT_OLD:-/work/wt-old}
OUT=${OUT:-/tmp/usink}
NAMES=$(python3 -c "
import json
c = json.load(open('benchmarks/gpu/measured_space.json'))['configs']
print(' '.join(x['family'] + '.' + x['name'] for x in c if x['family'].startswith('attention')
               and x['config']['num_warps'] == 8 and x['config']['num_stages'] >= 3))")
S=benchmarks/recorded/2026-12-07-unspecialized-sink-cpu/affected.py
PYTHONPATH=$PWD WS_SOLVER_CACHE_DIR=$OUT/plans-new .venv-triton3.9/bin/python $S $OUT/new $NAMES > $OUT-new.log &
(cd "$WT_OLD" && PYTHONPATH=$WT_OLD WS_SOLVER_CACHE_DIR=$OUT/plans-old "$OLDPWD/.venv-triton3.9/bin/python" "$OLDPWD/$S" $OUT/old $NAMES > $OUT-old.log) &
wait

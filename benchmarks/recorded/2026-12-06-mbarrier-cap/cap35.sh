#!/usr/bin/env bash
# issue 35: the committed search with sm_100's mbarrier cap at 256 (the code of this change) on
# the 16 sm_100 scale-family loops and the 4 out-of-sample ones, seeds 0-4, 10 deterministic
# s, 2 workers (bench_scale_families' `solve_row`, as `measure` runs `optimal`), largest loops
# first, 15 at once on the GPU machine's 16 CPU cores. Loops in .devrun/loops.
set -uo pipefail
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
L=.devrun/loops; R=/tmp/res/cap35; mkdir -p $R/rows; J=$R/jobs.txt; : > $J
for f in $(ls -S $L); do for s in 0 1 2 3 4; do echo "$f $s" >> $J; done; done
(cd $L && sha256sum *.ttgir) > $R/loops.sha256; t0=$(date +%s)
cat $J | timeout ${1:-170} xargs -P 15 -L 1 sh -c 'python3 -c "
import json, sys
from pathlib import Path
from benchmarks.cpu.bench_scale_families import load, solve_row
graph, target, base = load(Path(sys.argv[1]))
print(json.dumps({**base, **solve_row(graph, target, \"default\", int(sys.argv[2]), 10.0, 2)}))
" '$L'/$0 $1 > '$R'/rows/$0.$1.jsonl 2>>'$R'/err.log; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"; cat $R/rows/*.jsonl > $R/default.jsonl; wc -l < $R/default.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/cap35.tgz cap35

#!/usr/bin/env bash
# issue 35: 300 s reference runs (bench_scale_families' `reference` row: wall and deterministic
# limit 300 s, 8 workers) of the 12 sm_100 loops no default-limit run proves, seed 0, plus
# seeds 1-2 of the 155-op in-sample loop and seed 1 of the 155-op out-of-sample one: 15 at once
# on the GPU machine's 16 CPU cores. The loops in .devrun/loops (bench_scale_families dump
# --only sm100, and bench_scale.generate for the out-of-sample ones: loops.sha256).
set -uo pipefail
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
L=.devrun/loops; R=/tmp/res/refs35; mkdir -p $R/rows; J=$R/jobs.txt; : > $J
for f in attn_fwd.u2 attention_unrolled_d64.u2 attn_bwd.u2 attn_fwd.u3 attn_bwd.u3 attn_fwd.u4 attn_bwd.u4 \
         attention_unrolled_d32.u5 attention_unrolled.d16_m128n16_w4_s2_u3 attention_unrolled.d32_m128n32_w4_s2_u3 \
         attention_unrolled.d32_m128n32_w4_s2_u4 attention_unrolled.d16_m128n16_w4_s2_u5; do echo "$f 0" >> $J; done
echo "attention_unrolled_d32.u5 1" >> $J; echo "attention_unrolled_d32.u5 2" >> $J
echo "attention_unrolled.d16_m128n16_w4_s2_u5 1" >> $J
(cd $L && sha256sum *.ttgir) > $R/loops.sha256; t0=$(date +%s)
cat $J | xargs -P 15 -L 1 sh -c 'python3 -c "
import json, sys
from pathlib import Path
from benchmarks.cpu.bench_scale_families import load, solve_row
graph, target, base = load(Path(sys.argv[1]))
print(json.dumps({**base, **solve_row(graph, target, \"reference\", int(sys.argv[2]), 300.0, 8)}))
" '$L'/$0.sm100.ttgir $1 > '$R'/rows/$0.$1.jsonl 2>>'$R'/err.log; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"; cat $R/rows/*.jsonl > $R/references.jsonl; wc -l < $R/references.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/refs35.tgz refs35

#!/usr/bin/env bash
# issue 35: the committed search at longer limits on the large sm_100 loops; the plateau descent.
set -uo pipefail
mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c 'import ortools, networkx, numpy; print(ortools.__version__, networkx.__version__)' || exit 2; nproc
L=.devrun/loops; R=/tmp/res/limits35; mkdir -p $R/rows; J=$R/jobs.txt; : > $J
for s in 0 1 2 3 4; do
  for f in attention_unrolled_d32.u5.sm100 attention_unrolled.d16_m128n16_w4_s2_u5.sm100; do
    for l in 30 20 15; do echo "$f base $l $s" >> $J; done; echo "$f plateau 20 $s" >> $J; done
  echo "attention_unrolled_d32.u5.sm100 base 10 $s" >> $J
  for f in attn_fwd.u4.sm100 attn_bwd.u4.sm100 attention_unrolled.d32_m128n32_w4_s2_u4.sm100; do
    for l in 20 15; do echo "$f base $l $s" >> $J; done; done
done
wc -l < $J; t0=$(date +%s)
cat $J | timeout ${1:-520} xargs -P 15 -L 1 sh -c 'python3 .devrun/v35.py '$L'/$0.ttgir $1 $2 $3 > '$R'/rows/$0.$1.$2.$3.jsonl 2>>'$R'/err.log; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"; cat $R/rows/*.jsonl > $R/rows.jsonl; wc -l $R/rows.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/limits35.tgz limits35

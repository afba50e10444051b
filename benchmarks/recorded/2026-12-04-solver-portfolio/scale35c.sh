#!/usr/bin/env bash
# issue 35: solver variants (2 workers; subsolver sets) on the scale families' loops, seeds 0-4,
# 10 deterministic s; plus `measure` (heuristic row + 5 seeds, 1 worker) of the 4 new sm_90 loops.
set -uo pipefail
mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c 'import triton, ortools; print(triton.__version__, ortools.__version__)'; nproc
D=.devrun/loops; R=/tmp/res/scale35c; mkdir -p $R/rows
sha256sum $D/* > $R/loops.sha256
jobs=$R/jobs.txt; : > $jobs
# hard sm_100 loops first (the longest), then the rest
HARD="attention_unrolled_d32.u5 attn_bwd.u4 attn_fwd.u4 attn_bwd.u3 attn_fwd.u3 attn_bwd.u2 attention_unrolled_d64.u2 attn_fwd.u2"
for l in $HARD; do for v in w2 w2_lnsonly w2_nolp w2_nocore; do for s in 0 1 2 3 4; do echo "v $l.sm100.ttgir $v $s" >> $jobs; done; done; done
for f in attn_bwd.u88.sm90 attn_fwd.u110.sm90 attn_bwd.u64.sm90 attn_fwd.u64.sm90; do echo "m $f.ttgir" >> $jobs; for s in 0 1 2 3 4; do echo "v $f.ttgir w2 $s" >> $jobs; done; done
for f in $(ls $D | sed 's/.ttgir$//'); do case " $HARD " in *" ${f%.sm100} "*) continue;; esac
  case $f in attn_bwd.u88.sm90|attn_fwd.u110.sm90|attn_bwd.u64.sm90|attn_fwd.u64.sm90) continue;; esac
  for v in w2 w2_lnsonly w2_nolp w2_nocore; do [ "${f%.sm90}" != "$f" ] && [ $v != w2 ] && continue; echo "v $f.ttgir $v 0 1 2 3 4" >> $jobs; done; done
wc -l $jobs
t0=$(date +%s)
cat $jobs | timeout ${1:-500} xargs -P 15 -L 1 sh -c '
  if [ "$0" = m ]; then python3 -m benchmarks.cpu.bench_scale_families measure '$D'/$1 5 10 0 > '$R'/rows/m.$1.jsonl 2>>'$R'/err.log
  else n=$(echo "$@" | tr " " _); python3 .devrun/variants35.py '$D'/$@ > '$R'/rows/v.$n.jsonl 2>>'$R'/err.log; fi; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"
cat $R/rows/v.*.jsonl > $R/variants.jsonl; cat $R/rows/m.*.jsonl > $R/measure-new-sm90.jsonl; wc -l $R/*.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/scale35c.tgz scale35c

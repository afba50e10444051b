#!/usr/bin/env bash
# issue 35, second batch: solver variants (2 workers; subsolver sets; optimizing share) on the scale families' loops, seeds 0-4,
# 10 deterministic s, sm_100 loops only.
set -uo pipefail
mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c 'import triton, ortools; print(triton.__version__, ortools.__version__)'; nproc
D=.devrun/loops; R=/tmp/res/scale35d; mkdir -p $R/rows
sha256sum $D/* > $R/loops.sha256
jobs=$R/jobs.txt; : > $jobs
# hard sm_100 loops first (the longest), then the rest
VARS="w2_nocore_share95 w2_lnsqr w2_lpfirst w2_lnsqr_share95"
HARD="attention_unrolled_d32.u5 attn_bwd.u4 attn_fwd.u4 attn_bwd.u3 attn_fwd.u3 attn_bwd.u2 attention_unrolled_d64.u2 attn_fwd.u2"
for l in $HARD; do for v in $VARS; do for s in 0 1 2 3 4; do echo "v $l.sm100.ttgir $v $s" >> $jobs; done; done; done
for f in $(ls $D | sed 's/.ttgir$//'); do case " $HARD " in *" ${f%.sm100} "*) continue;; esac
  case $f in attn_bwd.u88.sm90|attn_fwd.u110.sm90|attn_bwd.u64.sm90|attn_fwd.u64.sm90) continue;; esac
  [ "${f%.sm90}" != "$f" ] && continue; for v in $VARS; do echo "v $f.ttgir $v 0 1 2 3 4" >> $jobs; done; done
wc -l $jobs
t0=$(date +%s)
cat $jobs | timeout ${1:-500} xargs -P 15 -L 1 sh -c '
  if [ "$0" = m ]; then python3 -m benchmarks.cpu.bench_scale_families measure '$D'/$1 5 10 0 > '$R'/rows/m.$1.jsonl 2>>'$R'/err.log
  else n=$(echo "$@" | tr " " _); python3 .devrun/variants35.py '$D'/$@ > '$R'/rows/v.$n.jsonl 2>>'$R'/err.log; fi; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"
cat $R/rows/v.*.jsonl > $R/variants.jsonl; wc -l $R/*.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/scale35d.tgz scale35d

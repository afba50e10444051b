#!/usr/bin/env bash
# issue 35, the new default as committed (2 workers, optimizing without `core` on sm_100):
# `measure` (heuristic row + seeds 0-4, 10 deterministic s) of the 26 scale-family loops; and an
# out-of-sample check on 5 loops of bench_scale's own family at other tiles/unrolls: the code
# before (`old`: 1 worker, core first) and after (`new`), seeds 0-4, plus a 60 det. s run (`ref60`).
set -uo pipefail
mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c 'import triton, ortools; print(triton.__version__, ortools.__version__)'; nproc
D=.devrun/loops; O=.devrun/oos; R=/tmp/res/scale35e; mkdir -p $R/rows
sha256sum $D/* $O/* > $R/loops.sha256
jobs=$R/jobs.txt; : > $jobs
for f in $(ls $O); do echo "v $O/$f ref60 0" >> $jobs; done
for f in attention_unrolled_d32.u5.sm100 attn_bwd.u4.sm100 attn_fwd.u4.sm100 attn_bwd.u3.sm100 attn_fwd.u3.sm100 attn_bwd.u2.sm100 attention_unrolled_d64.u2.sm100 attn_fwd.u2.sm100 attn_bwd.u88.sm90 attn_fwd.u110.sm90 attn_bwd.u64.sm90 attn_fwd.u64.sm90; do echo "m $D/$f.ttgir" >> $jobs; done
for f in $(ls $O); do for v in old new; do for s in 0 1 2 3 4; do echo "v $O/$f $v $s" >> $jobs; done; done; done
for f in $(ls $D); do grep -q "$f" $jobs || echo "m $D/$f" >> $jobs; done
wc -l $jobs
t0=$(date +%s)
cat $jobs | timeout ${1:-500} xargs -P 15 -L 1 sh -c '
  n=$(echo "$@" | tr " /" "__")
  if [ "$0" = m ]; then python3 -m benchmarks.cpu.bench_scale_families measure $1 5 10 0 > '$R'/rows/m.$n.jsonl 2>>'$R'/err.log
  else python3 .devrun/variants35.py $@ > '$R'/rows/v.$n.jsonl 2>>'$R'/err.log; fi; echo -n .'
echo; echo "ran in $(( $(date +%s) - t0 )) s"
cat $R/rows/m.*.jsonl > $R/default.jsonl; cat $R/rows/v.*.jsonl > $R/out-of-sample.jsonl; wc -l $R/*.jsonl; tail -3 $R/err.log
tar -C /tmp/res -czf $OUT/scale35e.tgz scale35e

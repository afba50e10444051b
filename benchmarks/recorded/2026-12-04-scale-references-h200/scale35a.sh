#!/usr/bin/env bash
# issue 35: dump the scale families (Triton 3.6, this machine's) and run every loop's
# default-limit solves (5 seeds x 10 deterministic s, 1 worker), 14 loops at a time.
set -uo pipefail
mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c 'import triton, ortools; print(triton.__version__, ortools.__version__)'; nproc
D=/tmp/loops; R=/tmp/res/scale35; mkdir -p $D $R/rows
NAMES=$(python3 -c "from benchmarks.cpu.bench_scale_families import LOOPS, file_name; print(' '.join(file_name(*l) for l in LOOPS))")
t0=$(date +%s)
printf '%s\n' $NAMES | xargs -P 16 -I{} sh -c 'python3 -m benchmarks.cpu.bench_scale_families dump '$D' --only {} 2>>'$R'/dump.log'
echo "dumped $(ls $D | wc -l) in $(( $(date +%s) - t0 )) s"; ls $D > $R/dumped.txt
sha256sum $D/* > $R/loops.sha256
t0=$(date +%s)
ls $D | timeout ${1:-420} xargs -P 14 -I{} sh -c 'python3 -m benchmarks.cpu.bench_scale_families measure '$D'/{} 5 10 0 > '$R'/rows/{}.jsonl 2> '$R'/rows/{}.err'
echo "measured in $(( $(date +%s) - t0 )) s"
cat $R/rows/*.jsonl > $R/default.jsonl; wc -l $R/default.jsonl
python3 -m benchmarks.cpu.bench_scale_families report $R/default.jsonl > $R/default.md 2>$R/report.err; tail -6 $R/default.md
cp -r $D $R/loops; tar -C /tmp/res -czf $OUT/scale35.tgz scale35

#!/usr/bin/env bash
# issue 34: the whole sm_90 config space, stock (builtin) and optimal, ptxas records, this
# code; Triton = whatever python3 imports (3.6 machine's, or 3.9 after gpu_triton39.sh).
set -uo pipefail
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2; }
export PYTHONPATH=$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
V=$(python3 -c 'import triton; print(triton.__version__)'); echo triton $V
F=/tmp/res/sm90spill-$V.jsonl; mkdir -p /tmp/res; t0=$(date +%s)
timeout ${1:-500} python3 -m benchmarks.cpu.configspace_usage --out $F --jobs 16 --target sm90 --strategies builtin,optimal > /tmp/res/sm90spill-$V.log 2>&1
echo "rc=$? in $(( $(date +%s) - t0 )) s; $(wc -l < $F) records"; tail -3 /tmp/res/sm90spill-$V.log
python3 -m benchmarks.cpu.configspace_usage --summary $F > /tmp/res/sm90spill-$V.md 2>&1; head -30 /tmp/res/sm90spill-$V.md
cp $F /tmp/res/sm90spill-$V.log /tmp/res/sm90spill-$V.md $OUT/

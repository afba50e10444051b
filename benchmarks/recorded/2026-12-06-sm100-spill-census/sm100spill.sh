#!/usr/bin/env bash
# the whole sm_100 config space, stock (builtin) and optimal, ptxas records, this code, on the
# GPU machine's 16 CPU cores; Triton = whatever python3 imports (the machine's 3.6, or 3.9 after
# gpu_triton39.sh). Resumable: rerun with the same /tmp/res file to finish a cut-off run.
set -uo pipefail
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
V=$(python3 -c 'import triton; print(triton.__version__)'); echo triton $V
F=/tmp/res/sm100spill-$V.jsonl; mkdir -p /tmp/res; t0=$(date +%s)
timeout ${1:-500} python3 -m benchmarks.cpu.configspace_usage --out $F --jobs 16 --target sm100 --strategies builtin,optimal > /tmp/res/sm100spill-$V.log 2>&1
echo "rc=$? in $(( $(date +%s) - t0 )) s; $(wc -l < $F) records"; tail -3 /tmp/res/sm100spill-$V.log
python3 -m benchmarks.cpu.configspace_usage --summary $F > /tmp/res/sm100spill-$V.md 2>&1; head -30 /tmp/res/sm100spill-$V.md
cp $F /tmp/res/sm100spill-$V.log /tmp/res/sm100spill-$V.md $OUT/

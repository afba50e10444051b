#!/bin/bash
# Compile corpus configs through the drop-in without a GPU and list each variant's cubin:
# digest, ptxas's registers and stack frame (STACK > 0: it spilled), the setmaxnreg values.
# usage: probe.sh TREE CAPABILITY KERNELS STRATEGIES   (run from anywhere)
#   TREE: a checkout of the revision to compile with; PYTHON: a Triton 3.9 interpreter;
#   OUT: a scratch folder (default /tmp/capped-scale).
HERE=$(cd "$(dirname "$0")" && pwd)
TREE=$(cd "$1" && pwd); CAP=$2; K=$3; S=$4; OUT=${OUT:-/tmp/capped-scale}
PYTHON=${PYTHON:-python3}
D=$OUT/$(basename $TREE).sm$CAP.$(echo $K | tr , +).$(echo $S | tr , +)
rm -rf $D $D.c; mkdir -p $D
(cd $TREE && PYTHONPATH=$TREE $PYTHON -m benchmarks.gpu.bench_kernels --dry-run --capability $CAP \
  --kernels $K --strategies $S --out $D --parallel 2 --cache-root $D.c > $D/log 2>&1)
$PYTHON $HERE/cubins.py $D | tee $D/cubins.txt

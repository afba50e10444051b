#!/bin/bash
# One point of the register-cap probe: compile KERNEL CONFIG under STRATEGY for sm_90 (no GPU)
# with the register scale SCALE and, unless REGION is 0, every partition region's
# requestedRegisters set to REGION (so the default region gets what is left); print ptxas's
# register count, stack frame (spills) and the setmaxnreg values in the SASS.
# usage: probe.sh REGION KERNEL CONFIG STRATEGY SCALE   (run from the repository root;
#        PYTHON: the interpreter of a Triton 3.9 or 3.6 environment; OUT: a scratch folder)
HERE=$(cd "$(dirname "$0")" && pwd)
R=$1; K=$2; C=$3; S=$4; SC=$5; OUT=${OUT:-/tmp/register-caps}; PYTHON=${PYTHON:-python3}
D=$OUT/$K.$C.$S.s$SC.r$R
rm -rf $D $D.c; mkdir -p $D
env WS_EXP_REG_SCALE=$SC $( [ "$R" != "0" ] && echo WS_EXP_REGION_REGS=$R ) PYTHONPATH=$HERE:$PWD \
  $PYTHON -m benchmarks.gpu.bench_kernels --dry-run --kernels $K --configs $C --strategies $S \
  --out $D --parallel 1 --cache-root $D.c > $D/log 2>&1
BIN=$($PYTHON -c "import triton, os; print(os.path.dirname(triton.__file__))")/backends/nvidia/bin
for f in $(find $D.c -name "*.cubin"); do
  res=$($BIN/cuobjdump -res-usage $f | grep -o "REG:[0-9]* STACK:[0-9]*")
  mx=$($BIN/cuobjdump -sass $f | grep -o "USETMAXREG[^;]*" | grep -o "0x[0-9a-f]*" | sort -u | tr '\n' ' ')
  echo "$K $C $S scale=$SC region=$R | $res | maxreg: $mx"
done

#!/usr/bin/env bash
# issue 34: the sweep's GEMM configs (tma, fp8, persistent) timed at 2048^3 instead of 8192^3:
# stock, none, optimal, Triton 3.6 (the machine's).
set -uo pipefail
FINAL=$OUT; export OUT=/tmp/res/small36; mkdir -p $OUT
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
python3 -c 'import triton; print(triton.__version__)'
timeout ${1:-540} benchmarks/gpu/gpu_run.sh --extra-configs .devrun/gemm_configs.json --only-extra --kernels gemm_tma,gemm_fp8,gemm_persistent --strategies builtin,none,optimal --rounds 4 --rep-ms 25 --no-vendor --with-stock-only --size gemm_tma=2048 --size gemm_fp8=2048 --size gemm_persistent=2048 --what "issue 34: the sweep's GEMM configs at 2048^3 (one wave of 128x256 tiles)" > $OUT/stdout.txt 2>&1; rc=$?
tail -8 $OUT/stdout.txt; tar -C /tmp/res -czf $FINAL/small36.tgz small36; exit $rc

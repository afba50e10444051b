#!/usr/bin/env bash
# ptxas census of the drop-in's decision (stock's kernel a candidate) on the in-kernel-
# descriptor GEMM families, on the developers' 2-core machine, one config at a time; each
# Triton version from its venv (make test builds both). Then the summary (summary.py).
set -uo pipefail
for v in 3.6.0:.venv 3.9.0:.venv-triton3.9; do
  ver=${v%%:*}; venv=${v#*:}
  for target in sm90 sm100; do
    for f in gemm_tma_indesc gemm_fp8_indesc; do
      WS_SOLVER_CACHE_DIR=/tmp/cen/plans-$ver $venv/bin/python -m benchmarks.cpu.configspace_usage \
        --out /tmp/cen/indesc-$target-$ver.jsonl --family $f --jobs 1 --target $target \
        --strategies builtin,optimal
    done
  done
done
python3 benchmarks/recorded/2026-12-07-stock-candidate-census/summary.py /tmp/cen/indesc-*.jsonl

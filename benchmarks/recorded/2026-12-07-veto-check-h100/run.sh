#!/usr/bin/env bash
# Triton 3.9 on the H100 (after gpu_triton39.sh), the code with the spill check's hot-loop
# veto: the three configs of configs.json (the 0.61x `optimal` loss the veto addresses, and
# the two configs where 3.6's measured mode fell > 2% behind), default measured candidates.
python3 -m benchmarks.gpu.bench_measured --space benchmarks/recorded/2026-12-07-veto-check-h100/configs.json \
  --part 1/1 --out "$OUT/v39" --jobs 6 --cache-root /tmp/wsv39 --rounds 5 --batch-ms 25

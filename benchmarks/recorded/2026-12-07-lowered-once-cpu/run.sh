#!/usr/bin/env bash
# Drop-in compile time against stock's per kernel, CPU (the developers' 2-core machine, nothing
# else running), the config space's CI slice on sm_90, Triton 3.6.0, fresh Triton caches and an
# empty plan cache per compile: first compile of a process (a process per config and
# strategy), then sequential (one process per strategy compiles every config in turn).
set -uo pipefail
for mode in first sequential; do
  .venv/bin/python -m benchmarks.cpu.compile_time --out "/tmp/ctr3/ci-sm90-$mode.jsonl" \
    --slice ci --mode "$mode" > "/tmp/ctr3/$mode.log" 2>&1
done

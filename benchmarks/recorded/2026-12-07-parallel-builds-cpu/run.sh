#!/usr/bin/env bash
# Drop-in compile time against stock's per kernel, CPU (the developers' 2-core machine, nothing
# else running), sm_90, Triton 3.6.0, fresh Triton caches and an empty plan cache per compile
# (benchmarks/cpu/compile_time.py). The CI slice in sequential mode five times and in first
# mode once; the whole space's every 7th config twice; the same two at revision 2d16d77 (the
# session's start: BASE is a worktree of it) in the same hour. Runs one after another.
set -uo pipefail
OUT=${OUT:-/tmp/ctr5}
BASE=${BASE:-/work/wt-base}
ct() { timeout 1200 .venv/bin/python -m benchmarks.cpu.compile_time "$@"; }
for i in 1 2 3 4 5; do ct --out "$OUT/sequential-$i.jsonl" --slice ci --mode sequential; done
ct --out "$OUT/first-1.jsonl" --slice ci --mode first
for i in 1 2; do ct --out "$OUT/all7-sequential-$i.jsonl" --slice all --every 7 --mode sequential; done
(cd "$BASE" && for i in 1 2; do
  ../main/.venv/bin/python -m benchmarks.cpu.compile_time --out "$OUT/base-sequential-$i.jsonl" \
    --slice ci --mode sequential; done
  ../main/.venv/bin/python -m benchmarks.cpu.compile_time --out "$OUT/all7-base-sequential-1.jsonl" \
    --slice all --every 7 --mode sequential)

#!/usr/bin/env bash
# Compile time per kernel, stock Triton (builtin) against the drop-in's optimal, the config
# space's CI slice on sm_90, one child process per config (its own Triton caches), an empty
# plan cache, one config at a time (--jobs 1), on the developers' 2-core machine.
set -uo pipefail
rm -rf /tmp/ct && mkdir -p /tmp/ct/plans
WS_SOLVER_CACHE_DIR=/tmp/ct/plans .venv/bin/python -m benchmarks.cpu.configspace_usage \
  --out /tmp/ct/ci-sm90.jsonl --slice ci --jobs 1 --target sm90 --strategies builtin,optimal \
  > /tmp/ct/log 2>&1

#!/bin/bash
# What produced the JSONL of benchmarks/results/2026-12-04-configspace-usage (a 2-core CPU
# shared with others, no GPU): the CI slice under both Triton versions on sm_90 and sm_100 (all
# five strategies), then the sm_90 space in chunks of 10 configurations alternating between the
# versions until stopped, with the three strategies the targets compare (builtin = stock, none =
# unspecialized, optimal = the default). Run from SRC, a clean export of the commit named in the
# README (`git archive REV | tar -x -C SRC`), so that edits to the working tree made while it ran
# do not reach the compiles. Resumable: a rerun skips what a file holds.
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
RUN="$REPO/benchmarks/results/$(basename "$HERE")"  # where the JSONL goes
SRC=${SRC:-$REPO}
cd "$SRC" || exit 1
run() {  # venv, file, args...
  local venv=$1 file=$2; shift 2
  nice -n 10 "$REPO/$venv/bin/python" -m benchmarks.cpu.configspace_usage --out "$RUN/$file" \
    --jobs 1 "$@"
}
run .venv-triton3.9 usage-triton3.9.jsonl --slice ci --target sm90,sm100
run .venv usage-triton3.6.jsonl --slice ci --target sm90,sm100
SPACE=builtin,none,optimal
for _ in $(seq 1 40); do
  run .venv-triton3.9 usage-triton3.9.jsonl --target sm90 --limit 10 --strategies "$SPACE"
  run .venv usage-triton3.6.jsonl --target sm90 --limit 10 --strategies "$SPACE"
done

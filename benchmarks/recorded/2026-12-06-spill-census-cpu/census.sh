#!/usr/bin/env bash
# issue 34: the sm_90 config space's spill census (stock and `optimal`, ptxas -v on the PTX)
# rerun on this project's 2-core CPU machine after the spill check's change (4b46841), in the
# two supported Triton versions' virtual environments (make venv venv39). From the repository
# root:
#   benchmarks/recorded/2026-12-06-spill-census-cpu/census.sh OUTDIR
set -euo pipefail
out=${1:?output folder}; mkdir -p "$out"
for v in 3.6.0:.venv 3.9.0:.venv-triton3.9; do
  ver=${v%%:*}; env=${v##*:}
  "$env/bin/python" -m benchmarks.cpu.configspace_usage --out "$out/sm90spill-$ver.jsonl" \
    --jobs 2 --target sm90 --strategies builtin,optimal > "$out/sm90spill-$ver.log" 2>&1
  "$env/bin/python" -m benchmarks.cpu.configspace_usage --summary "$out/sm90spill-$ver.jsonl" \
    > "$out/sm90spill-$ver.md"
done

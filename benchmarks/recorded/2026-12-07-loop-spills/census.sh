#!/usr/bin/env bash
# The hot-loop spill rule over the sm_90 configs known to spill: those where stock's or the
# drop-in's binary spilled in the earlier CPU censuses (2026-12-06-spill-census-cpu,
# 2026-12-07-census-forms, 2026-12-07-stock-candidate-census: 554 of the 946 configs), per
# Triton version. builtin and optimal, one config at a time, the two versions at once. Then
# the decision check replayed on the recorded builds with and without the SASS loop counts.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/loopspills}
VENVS=${VENVS:-.}  # where .venv and .venv-triton3.9 are (a worktree: VENVS=/work/main)
R=benchmarks/results
mkdir -p "$OUT"
for v in 3.6.0 3.9.0; do  # the spilling configs of the earlier censuses
  $VENVS/.venv/bin/python - "$v" > "$OUT/spilling-$v.txt" <<'PY'
import json, sys
v = sys.argv[1]
files = [f"benchmarks/results/2026-12-06-spill-census-cpu/sm90spill-{v}.jsonl",
         f"benchmarks/results/2026-12-07-census-forms/forms-sm90-{v}.jsonl",
         f"benchmarks/results/2026-12-07-stock-candidate-census/indesc-sm90-{v}.jsonl"]
out = set()
for path in files:
    for line in open(path):
        r = json.loads(line)
        if r.get("kind") != "compile" or r.get("target") != "sm90":
            continue
        c, p = r.get("cubin") or {}, r.get("ptxas") or {}
        if c.get("stack_bytes") or p.get("stack_bytes") or p.get("spill_store_bytes"):
            out.add(r["config"])
print("\n".join(sorted(out)))
PY
done
one() {
  $2/bin/python -m benchmarks.cpu.configspace_usage --out "$OUT/census-$1.jsonl" \
    --configs "$OUT/spilling-$1.txt" --target sm90 --strategies builtin,optimal --jobs 1
}
one 3.6.0 "$VENVS/.venv" > "$OUT/census-3.6.0.log" 2>&1 &
one 3.9.0 "$VENVS/.venv-triton3.9" > "$OUT/census-3.9.0.log" 2>&1 &
wait
PYTHONPATH=. $VENVS/.venv/bin/python benchmarks/recorded/2026-12-07-loop-spills/replay.py \
  "$OUT"/census-3.6.0.jsonl "$OUT"/census-3.9.0.jsonl | tee "$OUT/replay.txt"

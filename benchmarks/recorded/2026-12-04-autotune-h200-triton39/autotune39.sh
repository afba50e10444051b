#!/usr/bin/env bash
# issue 34, item 5: the config-space sweep's autotune column under Triton 3.9 (the slim wheel, gpu_triton39.sh).
# stock (builtin) and autotune (what ws_solver.triton.autotune picks with its default
# candidates, tuned on this GPU at the bench size) verified and timed in the same balanced
# rounds as the sweep (--rounds 4 --rep-ms 40 --with-stock-only), on COUNT of the sweep's 176
# configurations (sweep_configs39.json) from FIRST, families interleaved so that every slice
# holds all four. From the repository root:
#   benchmarks/recorded/2026-12-04-autotune-h200-triton39/autotune39.sh [COUNT=88] [FIRST=0] [LIMIT_S=480]
# Two calls cover the sweep: `88 0` and `88 88`, estimated 6-8 min each. The CPU warms every
# config's ten builds in 15 helpers ahead of the GPU (22.6 s of CPU per config on the 2-core
# CPU machine over this slice 1: 1.5-2.5 s of wall per config with 15 helpers); the GPU
# tunes each config in ~2.5-4 s (the autotuner's default rounds over ~4 distinct binaries:
# ~17 do_bench calls of ~0.11-0.15 s), then verifies and times stock and the winner (~1 s a
# config). Tuning stops at LIMIT_S - 40 - 1.2 COUNT s (--autotune-stop-after): configs not
# reached by then (the tail of this script's order) are left out, the rest still verified and
# timed before LIMIT_S; the last line says where to start the next call.
# Results: $OUT/autotune36-FIRST-END.tgz (results.json/md, log.txt, env.txt, report.md, slice).
set -uo pipefail
N=${1:-88}; FIRST=${2:-0}; LIMIT=${3:-480}; STOP=$((LIMIT - 40 - 12 * N / 10))
NAME=autotune39-$FIRST-$((FIRST + N)); FINAL=$OUT; export OUT=/tmp/res/$NAME; mkdir -p "$OUT"
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
source benchmarks/gpu/gpu_env.sh || exit 2
source benchmarks/gpu/gpu_triton39.sh || exit 2
export PYTHONPATH=$PYTHONPATH:/tmp/site
python3 -c 'import triton; print("triton", triton.__version__)'
python3 - "$N" "$FIRST" "$OUT/slice.json" <<'PY' || exit 2
import json, sys
n, first, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
space = json.load(open("benchmarks/results/2026-12-04-configspace-h200/sweep_configs39.json"))
names = {f: sorted(space[f]) for f in ("gemm_tma", "gemm_fp8", "gemm_persistent", "attention_fwd")}
order = [(f, c[i]) for i in range(max(map(len, names.values()))) for f, c in names.items() if i < len(c)]
chosen = {}
for f, c in order[first:first + n]:
    chosen.setdefault(f, {})[c] = space[f][c]
json.dump(chosen, open(out, "w"), indent=1)
print(f"{sum(map(len, chosen.values()))} of {len(order)} configurations from {first}:",
      ", ".join(f"{f} {len(v)}" for f, v in chosen.items()))
PY
t0=$(date +%s)
timeout "$LIMIT" benchmarks/gpu/gpu_run.sh --extra-configs "$OUT/slice.json" --only-extra \
  --kernels gemm_tma,gemm_fp8,gemm_persistent,attention_fwd --strategies builtin,autotune \
  --rounds 4 --rep-ms 40 --no-vendor --with-stock-only --autotune-stop-after "$STOP" \
  --what "issue 34: the config-space sweep's autotune column, $N configs from $FIRST (Triton 3.9)" \
  2>&1 | grep --line-buffered -E '^(autotune|compil|timing|total|STALLED|[0-9]+ variants|  FAILED)'
rc=${PIPESTATUS[0]}
echo "rc=$rc in $(( $(date +%s) - t0 )) s (124: killed at ${LIMIT} s; results.json keeps what was done)"
python3 - "$OUT/results.json" "$N" "$FIRST" <<'PY'
import json, sys
left = json.load(open(sys.argv[1]))["environment"].get("autotune", {}).get("left_out", [])
n, first = int(sys.argv[2]), int(sys.argv[3])
print(f"left out {len(left)} configs" + (f": next call `{len(left)} {first + n - len(left)}`" if left else ""))
PY
python3 -m benchmarks.analysis.configspace_sweep report "$OUT/results.json" --out "$OUT/report.md" | head -14
tar -C /tmp/res -czf "$FINAL/$NAME.tgz" "$NAME"
exit $rc

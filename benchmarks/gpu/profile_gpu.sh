#!/usr/bin/env bash
# Profile attention variants and torch SDPA with Nsight Compute, when the machine has it.
#
#   benchmarks/gpu/profile_gpu.sh [KERNEL CONFIG STRATEGY]...    (from the repository root)
#
# Each variant is launched by benchmarks/gpu/profile_kernel.py at the bench size; ncu records
# its second launch (speed of light, compute and memory workload, warp states, instruction
# mix) into $OUT/ncu_<config>_<strategy>.txt. Exits 3 when there is no ncu.
# NCU_METRICS adds `--metrics $NCU_METRICS` (e.g. the per-reason stall ratios, see
# docs/performance.md). NCU_SOURCE=1 also writes $OUT/ncu_<config>_<strategy>_sass.txt: the
# kernel's SASS with the warp-state samples of each instruction (where the warps wait).
set -uo pipefail
OUT=${OUT:-$PWD/profile_out}
mkdir -p "$OUT"
# shellcheck source=benchmarks/gpu/gpu_env.sh
source benchmarks/gpu/gpu_env.sh || exit 2
NCU=$(command -v ncu || true)
for candidate in /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
  if [ -z "$NCU" ] && [ -x "$candidate" ]; then NCU=$candidate; fi
done
if [ -z "$NCU" ]; then
  echo "no ncu on this machine" | tee "$OUT/ncu_missing.txt"
  exit 3
fi
"$NCU" --version | tee "$OUT/ncu_version.txt"
if [ $# -eq 0 ]; then
  set -- attention_fwd d128_m128n128_w8_s3_ahead none \
    attention_fwd d128_m128n128_w8_s3_ahead builtin \
    attention_fwd d128_m128n128_w8_s2 heuristic \
    attention_fwd d128_m128n128_w8_s2 vendor
fi
while [ $# -ge 3 ]; do
  kernel=$1 config=$2 strategy=$3
  shift 3
  echo "== $kernel $config $strategy"
  extra=()
  if [ -n "${NCU_METRICS:-}" ]; then extra=(--metrics "$NCU_METRICS"); fi
  timeout 150 "$NCU" --launch-skip 1 --launch-count 1 "${extra[@]}" \
    -k 'regex:attention|sdpa|fmha|flash|cudnn' \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section InstructionStats --section Occupancy \
    python3 -m benchmarks.gpu.profile_kernel "$kernel" "$config" "$strategy" --launches 2 \
    >"$OUT/ncu_${config}_${strategy}.txt" 2>&1
  echo "rc $?"
  if [ -n "${NCU_SOURCE:-}" ]; then
    timeout 150 "$NCU" --launch-skip 1 --launch-count 1 \
      -k 'regex:attention|sdpa|fmha|flash|cudnn' \
      --section SourceCounters --section WarpStateStats --page source --print-source sass \
      python3 -m benchmarks.gpu.profile_kernel "$kernel" "$config" "$strategy" --launches 2 \
      >"$OUT/ncu_${config}_${strategy}_sass.txt" 2>&1
    echo "sass rc $?"
  fi
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Issue Slots Busy|Executed Ipc Active|Registers Per|ERR_" \
    "$OUT/ncu_${config}_${strategy}.txt" | head -12
done

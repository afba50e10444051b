set -u
source benchmarks/gpu/gpu_env.sh || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/env.txt 2>&1
X=.snap/exp/x.json
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
N=x_d128_m128n128_w8_s3
$TV d128_m128n128_w8_s3_ahead dropin:none ${N}_ahead_fold=dropin:none ${N}_ahead_fold_emu4=dropin:none \
  ${N}_ahead_fold_emu8=dropin:none ${N}_ahead_emu4=dropin:none ${N}_late_fold=dropin:none \
  ${N}_late_fold=.snap/exp/lf_c1.ttgir ${N}_late_fold=.snap/exp/lf_c2.ttgir \
  ${N}_late_fold_emu4=.snap/exp/lfe4_c2.ttgir --rounds 5 --extra-configs $X --out $OUT/noncausal 2>&1 | grep -v Warning | tee $OUT/noncausal.log
$TV causal_d128_m128n128_w8_s2 dropin:none x_causal_d128_m128n128_w8_s3_ahead=dropin:none \
  x_causal_d128_m128n128_w8_s2_ahead=dropin:none x_causal_d128_m128n128_w8_s3_ahead_fold_emu4=dropin:none \
  --rounds 5 --extra-configs $X --out $OUT/causal 2>&1 | grep -v Warning | tee $OUT/causal.log
$TV d64_m128n64_w4_s3 dropin:none x_d64_m128n64_w4_s3_ahead=dropin:none x_d64_m128n64_w4_s3_ahead_fold_emu4=dropin:none \
  --rounds 5 --extra-configs $X --out $OUT/d64 2>&1 | grep -v Warning | tee $OUT/d64.log
$TV causal_d64_m128n64_w4_s3 dropin:none x_causal_d64_m128n64_w4_s3_ahead=dropin:none \
  --rounds 5 --extra-configs $X --out $OUT/causal_d64 2>&1 | grep -v Warning | tee $OUT/causal_d64.log

set -u
source benchmarks/gpu/gpu_env.sh || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/env.txt 2>&1
X=.snap/exp/x.json
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
$TV d128_m128n128_w8_s3_ahead dropin:none .snap/exp/b_p1.ptx .snap/exp/b_p2.ptx .snap/exp/b_p3.ptx \
  --rounds 7 --extra-configs $X --out $OUT/noncausal 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/noncausal.log
$TV causal_d128_m128n128_w8_s2 dropin:none x_causal_d128_m128n128_w8_s3_ahead=dropin:none \
  x_causal_d128_m128n128_w8_s3_ahead=.snap/exp/c_p1.ptx \
  --rounds 7 --extra-configs $X --out $OUT/causal 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/causal.log

set -u
source benchmarks/gpu/gpu_env.sh || exit 2
X=.snap/exp/x.json
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
$TV d128_m128n128_w8_s3_ahead dropin:none x_d128_m128n64_w4_s2=dropin:none x_d128_m128n64_w4_s2_ahead=dropin:none \
  x_d128_m128n32_w4_s3_ahead=dropin:none x_d128_m128n64_w4_s2_late=dropin:none \
  --rounds 5 --extra-configs $X --out $OUT/w4 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/w4.log

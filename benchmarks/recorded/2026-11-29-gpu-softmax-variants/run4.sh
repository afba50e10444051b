set -u
source benchmarks/gpu/gpu_env.sh || exit 2
X=.snap/exp/x.json
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
L=x_d128_m128n64_w4_s2_late
$TV d128_m128n128_w8_s3_ahead dropin:none $L=dropin:none $L=.snap/exp/w4_late_c1.ttgir $L=.snap/exp/w4_late_c2.ttgir \
  --rounds 5 --extra-configs $X --out $OUT/w4c 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/w4c.log

set -u
source benchmarks/gpu/gpu_env.sh || exit 2
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
$TV d128_m128n128_w8_s3_ahead dropin:none dropin:triton .snap/exp/tov.ptx .snap/exp/tov_wg.ptx \
  --base-strategy triton --rounds 7 --out $OUT/wg 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/wg.log

set -u
cp .snap/exp/attention_fwd_patched.py corpus/kernels/attention_fwd.py
source benchmarks/gpu/gpu_env.sh || exit 2
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
timeout 570 $TV d128_m128n128_w8_s2 x_d128_s2_base=dropin:optimal x_d128_s2_fold=dropin:optimal x_d128_s2_qscale=dropin:optimal \
  x_d128_s2_qscale=.snap/exp/qs_hoist.ttgir --extra-configs .snap/exp/qs.json \
  --base-strategy optimal --rounds 5 --sustain 10 --sustain-rounds 2 --out $OUT/qs 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/qs.log

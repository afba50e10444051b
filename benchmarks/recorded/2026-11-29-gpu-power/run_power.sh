set -u
source benchmarks/gpu/gpu_env.sh || exit 2
nvidia-smi -q -d POWER,CLOCK > $OUT/smi_q.txt 2>&1
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
timeout 560 $TV d128_m128n128_w8_s2 dropin:optimal dropin:none .snap/exp/opt_s2_st.ptx \
  --base-strategy optimal --rounds 3 --sustain 12 --sustain-rounds 2 --out $OUT/power 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/power.log

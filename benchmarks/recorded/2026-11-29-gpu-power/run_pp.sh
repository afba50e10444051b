set -u
source benchmarks/gpu/gpu_env.sh || exit 2
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/env.txt
TV="python3 benchmarks/gpu/ttgir_variants.py attention_fwd"
timeout 540 $TV d128_m128n128_w8_s2 dropin:optimal .snap/exp/opt_s2_pp.ptx .snap/exp/opt_s2_pps.ptx .snap/exp/opt_s2_st.ptx \
  x_d128_m128n128_w8_s3=dropin:optimal x_d128_m128n64_w8_s3=dropin:optimal x_d128_m128n64_w8_s4=dropin:optimal \
  d128_m128n128_w8_s3_ahead=dropin:triton \
  --extra-configs benchmarks/results/2026-11-29-gpu-explore/configs.json --base-strategy optimal --rounds 7 --out $OUT/pp 2>&1 | grep -v "Warning\|isinstance" | tee $OUT/pp.log

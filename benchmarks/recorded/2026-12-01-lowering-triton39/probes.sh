#!/bin/sh
# The follow-up probes of README.md, on Triton 3.9.0 (run from the repository root).
V="python benchmarks/recorded/2026-12-01-lowering-triton39/variants.py"
# R4: pair 4 (MMA 0, if body 1, loads 2) and the flat persistent GEMM's heuristic plan
# (if body 0, MMA 1, loads 2) with their partition ids permuted.
$V gemm_cond_reset.t128x128x64_g128_w4_s4.sm100.ttgir pair4 as-is 1,0,2 0,2,1 2,1,0 2,0,1 1,2,0
$V gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm100.ttgir heuristic as-is 2,1,0 1,0,2 1,2,0
# New failure: tt.reduce outside partition 0 (node 10: the max reduce, 25: the sum reduce,
# 19: the exp2 feeding the sum, 28: the addf consuming it); the heuristic plan's partitions:
# 0 softmax (8 warps), 1 correction (4), 2 MMA (1), 3 loads (1).
$V attention_fwd.d128_m128n128_w8_s2.sm100.ttgir heuristic move:0:25:1 move:0:25:2 move:0:25:3 move:0:10:1 move:0:19:1 move:0:28:1 2,1,0,3
# The optimal plan (0: loads, MMAs, softmax; 1: exp2 and the sum reduce).
$V attention_fwd.d128_m128n128_w8_s2.sm100.ttgir optimal as-is move:0:25:0 move:0:28:1
# Triton's own partitioner on sm_90 attention, with and without the Hopper fix.
$V attention_fwd.d128_m128n128_w8_s2.sm90.ttgir triton as-is no-hopper
$V attention_fwd.d64_m128n64_w4_s3.sm90.ttgir triton as-is no-hopper

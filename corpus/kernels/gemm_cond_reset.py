"""FP8 GEMM with per-K-group scales and periodic promotion of the accumulator.

A[M, K] and B[N, K] are e4m3 with one fp32 scale per (row, K group) and per (column, K group),
K groups of GROUP_K elements (DeepSeek-V3 style block quantization). The tensor-core
accumulator covers one K group; at the group's last K tile an ``if`` in the loop body loads
that group's scales, adds the scaled partial sum to an fp32 total and resets the accumulator.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import SCALES, gemm_signature, grouped_tile, launch_gemm, scaled_inputs


@triton.jit
def gemm_cond_reset_kernel(
    a_desc,
    b_desc,
    c_desc,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    PERIOD: tl.constexpr = GROUP_K // BLOCK_K
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(tl.program_id(0), num_pid_m, num_pid_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    rows = off_m + tl.arange(0, BLOCK_M)
    cols = off_n + tl.arange(0, BLOCK_N)
    num_groups = tl.cdiv(K, GROUP_K)

    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
        if (k + 1) % PERIOD == 0:
            group = k // PERIOD
            a_scale = tl.load(a_scale_ptr + rows * num_groups + group, mask=rows < M, other=0.0)
            b_scale = tl.load(b_scale_ptr + cols * num_groups + group, mask=cols < N, other=0.0)
            total += acc * a_scale[:, None] * b_scale[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_desc.store([off_m, off_n], total.to(tl.bfloat16))


KERNEL = gemm_cond_reset_kernel

CONFIGS: dict[str, dict] = {
    # PERIOD = GROUP_K // BLOCK_K must be >= 2, or the if folds away.
    "t128x128x64_g128_w4_s4": dict(
        BLOCK_M=128,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_K=128,
        GROUP_M=8,
        num_warps=4,
        num_stages=4,
    ),
    "t128x256x64_g256_w8_s3": dict(
        BLOCK_M=128,
        BLOCK_N=256,
        BLOCK_K=64,
        GROUP_K=256,
        GROUP_M=8,
        num_warps=8,
        num_stages=3,
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return gemm_signature(gemm_cond_reset_kernel, config, "fp8e4nv", "bf16", **SCALES)


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """Square problem M = N = K = size (a multiple of GROUP_K)."""
    groups = size // config["GROUP_K"]
    return {**scaled_inputs(size, seed, (size, groups)), "group_k": config["GROUP_K"]}


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, "a_scale", "b_scale")


def reference(inputs: dict[str, Any]) -> Any:
    """Sum over K groups of the scaled per-group products, in fp32."""
    a, b, gk = inputs["a"].float(), inputs["b"].float(), inputs["group_k"]
    total = 0.0
    for g in range(a.shape[1] // gk):
        part = a[:, g * gk : (g + 1) * gk] @ b[:, g * gk : (g + 1) * gk].T
        total = total + part * inputs["a_scale"][:, g, None] * inputs["b_scale"][None, :, g]
    return total

"""FP8 (e4m3) TMA GEMM with per-row scales for A and per-column scales for B.

C[M, N] = (a_scale[:, None] * B_scale[None, :]) * (A[M, K] @ B[N, K]^T), output bf16.
The scales factor out of the K sum, so they are applied once in the epilogue.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import SCALES, gemm_signature, grouped_tile, launch_gemm, scaled_inputs


@triton.jit
def gemm_fp8_kernel(
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
    GROUP_M: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(tl.program_id(0), num_pid_m, num_pid_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)

    rows = off_m + tl.arange(0, BLOCK_M)
    cols = off_n + tl.arange(0, BLOCK_N)
    a_scale = tl.load(a_scale_ptr + rows, mask=rows < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + cols, mask=cols < N, other=0.0)
    acc = acc * a_scale[:, None] * b_scale[None, :]
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


KERNEL = gemm_fp8_kernel

CONFIGS: dict[str, dict] = {
    "t128x128x128_w4_s4": dict(
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, GROUP_M=8, num_warps=4, num_stages=4
    ),
    "t128x256x128_w8_s3": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, GROUP_M=8, num_warps=8, num_stages=3
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")

# The argument types of the forms that take the tensors themselves (gemm_fp8_indesc,
# gemm_fp8_pointer).
TENSOR_TYPES: dict[str, str] = {
    "a_ptr": "*fp8e4nv",
    "b_ptr": "*fp8e4nv",
    "c_ptr": "*bf16",
    **SCALES,
}


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return gemm_signature(gemm_fp8_kernel, config, "fp8e4nv", "bf16", **SCALES)


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """Square problem M = N = K = size with positive per-row / per-column scales."""
    return scaled_inputs(size, seed, (size,))


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, "a_scale", "b_scale")


def reference(inputs: dict[str, Any]) -> Any:
    """Scaled A @ B^T in fp32 from the fp8 values."""
    acc = inputs["a"].float() @ inputs["b"].float().T
    return acc * inputs["a_scale"][:, None] * inputs["b_scale"][None, :]

"""FP16 GEMM with pointer loads (no TMA): C[M, N] = A[M, K] @ B[K, N], masked edges.

The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import grouped_tile, launch_gemm, signature_of, square_gemm_inputs


@triton.jit
def gemm_pointer_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(tl.program_id(0), num_pid_m, num_pid_n, GROUP_M)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


KERNEL = gemm_pointer_kernel

CONFIGS: dict[str, dict] = {
    "t128x128x32_w4_s4": dict(
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=4
    ),
    "t128x256x64_w8_s3": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(gemm_pointer_kernel)


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """Square problem M = N = K = size, B stored row-major [K, N]."""
    return square_gemm_inputs(size, seed)


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, form="pointer")


def reference(inputs: dict[str, Any]) -> Any:
    """A @ B in fp32."""
    return inputs["a"].float() @ inputs["b"].float()

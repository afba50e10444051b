"""gemm_fp8 with pointer loads (no TMA): FP8 (e4m3) A[M, K] and B[N, K], per-row scales for A
and per-column scales for B, bf16 C, masked edges.

The same computation, inputs and reference as ``gemm_fp8``; B is read as [N, K] tiles and
transposed in the dot, as fp8 wgmma wants both operands K-major. GPU helpers need torch and a
GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import gemm_fp8
from corpus.kernels._common import copy_configs, grouped_tile, launch_gemm, signature_of


@triton.jit
def gemm_fp8_pointer_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
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
    b_ptrs = b_ptr + cols[:, None] * stride_bn + ks[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(cols[:, None] < N) & (ks[None, :] < k_left), other=0.0)
        acc = tl.dot(a, b.T, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    a_scale = tl.load(a_scale_ptr + rows, mask=rows < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + cols, mask=cols < N, other=0.0)
    acc = acc * a_scale[:, None] * b_scale[None, :]
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))


KERNEL = gemm_fp8_pointer_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = copy_configs(gemm_fp8.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K", "stride_am", "stride_bn", "stride_cm")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(gemm_fp8_pointer_kernel, **gemm_fp8.TENSOR_TYPES)


make_inputs = gemm_fp8.make_inputs
reference = gemm_fp8.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, "a_scale", "b_scale", form="pointer")

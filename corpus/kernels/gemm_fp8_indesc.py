"""gemm_fp8 with its descriptors made inside the kernel (``tl.make_tensor_descriptor``): FP8
(e4m3) A[M, K] and B[N, K], per-row scales for A and per-column scales for B, bf16 C.

The same computation, inputs and reference as ``gemm_fp8`` (host descriptors); only where the
descriptors are made differs. The launch needs a global-scratch allocator
(``triton.set_allocator``), which ``launch`` sets. GPU helpers need torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import gemm_fp8
from corpus.kernels._common import copy_configs, grouped_tile, launch_gemm, signature_of


@triton.jit
def gemm_fp8_indesc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
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
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
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


KERNEL = gemm_fp8_indesc_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = copy_configs(gemm_fp8.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(gemm_fp8_indesc_kernel, **gemm_fp8.TENSOR_TYPES)


make_inputs = gemm_fp8.make_inputs
reference = gemm_fp8.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, "a_scale", "b_scale", form="kernel")

"""TMA GEMM whose descriptors are made inside the kernel (``tl.make_tensor_descriptor``), as
Triton's own tutorials and many users write it: C[M, N] = A[M, K] @ B[N, K]^T, one tile per
program, fp16 or fp8 (e4m3) inputs, fp16 output.

With descriptors made in the kernel stock Triton's sm_90 pass can split a 4-warp tile between
two consumer warp groups (it cannot retype descriptors passed from the host): the form where
stock's kernel is strongest (issue 48). The launch needs a global-scratch allocator
(``triton.set_allocator``), which ``launch`` sets. GPU helpers need torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import grouped_tile, launch_gemm, signature_of, square_gemm_inputs

DTYPES = {"fp16": "float16", "fp8": "float8_e4m3fn"}


@triton.jit
def gemm_tma_indesc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
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
    c_desc.store([off_m, off_n], acc.to(tl.float16))


KERNEL = gemm_tma_indesc_kernel

CONFIGS: dict[str, dict] = {
    # Stock splits this tile between two 4-warp consumer groups; no plan of ws_solver's fits.
    "t128x256x64_w4_s3": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3
    ),
    "t128x128x64_w4_s3": dict(
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=3
    ),
    "t128x256x64_w8_s3": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict, dtype: str = "fp16") -> dict[str, str]:
    """ASTSource signature for one config (``dtype``: fp16 or fp8 inputs)."""
    element = {"fp16": "*fp16", "fp8": "*fp8e4nv"}[dtype]
    return signature_of(gemm_tma_indesc_kernel, a_ptr=element, b_ptr=element)


def make_inputs(config: dict, size: int, seed: int, dtype: str = "fp16") -> dict[str, Any]:
    """Square problem M = N = K = size."""
    return square_gemm_inputs(size, seed, DTYPES[dtype], 0.5 if dtype == "fp8" else 1.0)


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs, form="kernel")


def reference(inputs: dict[str, Any]) -> Any:
    """A @ B^T in fp32."""
    return inputs["a"].float() @ inputs["b"].float().T

"""FP16 GEMM with TMA tensor descriptors: C[M, N] = A[M, K] @ B[N, K]^T, one tile per program.

The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import gemm_signature, grouped_tile, launch_gemm, square_gemm_inputs


@triton.jit
def gemm_tma_kernel(
    a_desc,
    b_desc,
    c_desc,
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
        off_k = k * BLOCK_K
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_n, off_k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


KERNEL = gemm_tma_kernel

CONFIGS: dict[str, dict] = {
    "t128x128x64_w4_s4": dict(
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=4
    ),
    "t128x256x64_w8_s3": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3
    ),
    # One more stage: the fastest TMA GEMM measured on the H200 (explore_configs.json).
    "t128x256x64_w8_s4": dict(
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=4
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return gemm_signature(gemm_tma_kernel, config)


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """Square problem M = N = K = size."""
    return square_gemm_inputs(size, seed)


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns C."""
    return launch_gemm(KERNEL, config, inputs)


def reference(inputs: dict[str, Any]) -> Any:
    """A @ B^T in fp32."""
    return inputs["a"].float() @ inputs["b"].float().T

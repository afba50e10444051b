"""gemm_persistent with pointer loads (no TMA): a persistent FP16 GEMM with a fused bias +
activation epilogue, masked edges.

The same computation, tile walk, inputs and reference as ``gemm_persistent``: each program
walks output tiles with a stride of the grid size, the tile loop carries ``warp_specialize``
and holds the K loop and the epilogue; ``FLATTEN`` fuses the two loops. B is read as [N, K]
tiles and transposed in the dot. GPU helpers need torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import gemm_persistent
from corpus.kernels._common import copy_configs, grouped_tile, launch_gemm, signature_of
from corpus.kernels.gemm_persistent import _activate


@triton.jit
def gemm_persistent_pointer_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
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
    ACTIVATION: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    start = tl.program_id(0)
    stride = tl.num_programs(0)
    ks = tl.arange(0, BLOCK_K)

    for tile_id in tl.range(start, num_tiles, stride, flatten=FLATTEN, warp_specialize=True):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_tiles):
            k_left = K - k * BLOCK_K
            a_ptrs = a_ptr + rows[:, None] * stride_am + (k * BLOCK_K + ks)[None, :]
            b_ptrs = b_ptr + cols[:, None] * stride_bn + (k * BLOCK_K + ks)[None, :]
            a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(cols[:, None] < N) & (ks[None, :] < k_left), other=0.0)
            acc = tl.dot(a, b.T, acc)
        bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
        out = _activate(acc + bias.to(tl.float32)[None, :], ACTIVATION)
        c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
        tl.store(c_ptrs, out.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


KERNEL = gemm_persistent_pointer_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = copy_configs(gemm_persistent.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K", "stride_am", "stride_bn", "stride_cm")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(gemm_persistent_pointer_kernel)


make_inputs = gemm_persistent.make_inputs
reference = gemm_persistent.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel on min(#SMs, #tiles) programs; returns C."""
    return launch_gemm(KERNEL, config, inputs, "bias", form="pointer", persistent=True)

"""gemm_persistent with its descriptors made inside the kernel (``tl.make_tensor_descriptor``):
a persistent FP16 GEMM with a fused bias + activation epilogue.

The same computation, tile walk, inputs and reference as ``gemm_persistent`` (host
descriptors): each program walks output tiles with a stride of the grid size, the tile loop
carries ``warp_specialize`` and holds the K loop and the epilogue; ``FLATTEN`` fuses the two
loops. The descriptors are made once per program, before the tile loop. The launch needs a
global-scratch allocator (``triton.set_allocator``), which ``launch`` sets. GPU helpers need
torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import gemm_persistent
from corpus.kernels._common import copy_configs, grouped_tile, launch_gemm, signature_of
from corpus.kernels.gemm_persistent import _activate


@triton.jit
def gemm_persistent_indesc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ACTIVATION: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    start = tl.program_id(0)
    stride = tl.num_programs(0)

    for tile_id in tl.range(start, num_tiles, stride, flatten=FLATTEN, warp_specialize=True):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([off_m, k * BLOCK_K])
            b = b_desc.load([off_n, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        cols = off_n + tl.arange(0, BLOCK_N)
        bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
        out = _activate(acc + bias.to(tl.float32)[None, :], ACTIVATION)
        c_desc.store([off_m, off_n], out.to(tl.float16))


KERNEL = gemm_persistent_indesc_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = copy_configs(gemm_persistent.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(gemm_persistent_indesc_kernel)


make_inputs = gemm_persistent.make_inputs
reference = gemm_persistent.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel on min(#SMs, #tiles) programs; returns C."""
    return launch_gemm(KERNEL, config, inputs, "bias", form="kernel", persistent=True)

"""Persistent FP16 TMA GEMM, C = A @ B^T, with the epilogue stored in column slices.

The shape of the kernel Triton's Gluon tutorial 08 measures on Blackwell (issue 39,
docs/blackwell-evidence.md, pairs 1-6): a persistent tile loop carrying ``warp_specialize``
around the TMA K loop, no bias, and the accumulator read and stored ``SLICES`` column slices
at a time, as the tutorial's epilogue does (``EPILOGUE_SUBTILE`` in Triton's
09-persistent-matmul tutorial writes the same split with reshape/permute/split, which Triton
lowers to one TMEM load per slice). Not in ``KERNEL_MODULES``: dumped only for the evidence
(corpus/evidence/), never timed here (no Blackwell GPU), so it has no GPU helpers.
"""

from __future__ import annotations

import triton
import triton.language as tl

from corpus.kernels._common import desc, gemm_config, gemm_signature, grouped_tile


@triton.jit
def _store_slices(c_desc, acc, off_m, off_n, BLOCK_N: tl.constexpr, SLICES: tl.constexpr):
    if SLICES == 1:
        c_desc.store([off_m, off_n], acc.to(tl.float16))
    elif SLICES == 2:
        halves = tl.permute(tl.reshape(acc, (acc.shape[0], 2, BLOCK_N // 2)), (0, 2, 1))
        h0, h1 = tl.split(halves)
        c_desc.store([off_m, off_n], h0.to(tl.float16))
        c_desc.store([off_m, off_n + BLOCK_N // 2], h1.to(tl.float16))
    else:  # 4: halves of halves
        halves = tl.permute(tl.reshape(acc, (acc.shape[0], 2, BLOCK_N // 2)), (0, 2, 1))
        h0, h1 = tl.split(halves)
        q = tl.permute(tl.reshape(h0, (acc.shape[0], 2, BLOCK_N // 4)), (0, 2, 1))
        q0, q1 = tl.split(q)
        c_desc.store([off_m, off_n], q0.to(tl.float16))
        c_desc.store([off_m, off_n + BLOCK_N // 4], q1.to(tl.float16))
        q = tl.permute(tl.reshape(h1, (acc.shape[0], 2, BLOCK_N // 4)), (0, 2, 1))
        q2, q3 = tl.split(q)
        c_desc.store([off_m, off_n + BLOCK_N // 2], q2.to(tl.float16))
        c_desc.store([off_m, off_n + 3 * BLOCK_N // 4], q3.to(tl.float16))


@triton.jit
def gemm_persistent_sliced_kernel(
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
    SLICES: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    start = tl.program_id(0)
    stride = tl.num_programs(0)

    for tile_id in tl.range(start, num_tiles, stride, warp_specialize=True):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([off_m, k * BLOCK_K])
            b = b_desc.load([off_n, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        _store_slices(c_desc, acc, off_m, off_n, BLOCK_N, SLICES)


KERNEL = gemm_persistent_sliced_kernel


# Gluon 07/08's configuration: 128x256x64, 4 operand buffers, 4 warps; the store slice width
# (c_desc's block) is BLOCK_N // SLICES.
CONFIGS: dict[str, dict] = {
    f"t128x256x64_x{s}_w4_s4": gemm_config(128, 256, 64, 4, 4, SLICES=s) for s in (1, 2, 4)
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    c_desc = desc("fp16", config["BLOCK_M"], config["BLOCK_N"] // config["SLICES"])
    return gemm_signature(gemm_persistent_sliced_kernel, config, c_desc=c_desc)

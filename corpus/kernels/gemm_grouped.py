"""Grouped FP16 GEMM (mixture-of-experts style), persistent over the tiles of all problems.

Problem g multiplies rows [starts[g], starts[g + 1]) of the concatenated A[sum M_g, K] by
expert weights B_g[N, K] (stacked as B[G * N, K]), writing the same rows of C[sum M_g, N].
The host lists each problem's row blocks in a tile table (group, row_start, row_end); the
tile loop walks (row block, column block) pairs and masks rows past the group's end.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import desc, num_sms, randn, signature_of, tma


@triton.jit
def gemm_grouped_kernel(
    a_desc,
    b_desc,
    c_ptr,
    tile_table_ptr,
    num_row_blocks,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_row_blocks * num_pid_n
    k_tiles = tl.cdiv(K, BLOCK_K)

    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), warp_specialize=True):
        row_block = tile // num_pid_n
        off_n = (tile % num_pid_n) * BLOCK_N
        group = tl.load(tile_table_ptr + 3 * row_block)
        row_start = tl.load(tile_table_ptr + 3 * row_block + 1)
        row_end = tl.load(tile_table_ptr + 3 * row_block + 2)

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([row_start, k * BLOCK_K])
            b = b_desc.load([group * N + off_n, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)

        rows = row_start + tl.arange(0, BLOCK_M)
        cols = off_n + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < row_end) & (cols[None, :] < N)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=mask)


KERNEL = gemm_grouped_kernel

CONFIGS: dict[str, dict] = {
    "t128x128x64_w4_s3": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3),
    "t64x128x64_w4_s4": dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=4),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    a, b = desc("fp16", bm, bk), desc("fp16", bn, bk)
    return signature_of(gemm_grouped_kernel, a_desc=a, b_desc=b, tile_table_ptr="*i32")


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """8 experts with uneven row counts around size / 8; N = K = size."""
    import torch

    groups = 8
    gen = torch.Generator().manual_seed(seed)
    counts = torch.randint(size // 16, size // 4 + 1, (groups,), generator=gen).tolist()
    rows = sum(counts)
    return {
        "a": randn((rows, size), torch.float16, seed + 1),
        "b": randn((groups * size, size), torch.float16, seed + 2),
        "c": torch.empty((rows, size), device="cuda", dtype=torch.float16),
        "counts": counts,
    }


def _tile_table(counts: list[int], block_m: int) -> Any:
    """(group, row_start, row_end) for every BLOCK_M row block of every group."""
    import torch

    table, start = [], 0
    for g, count in enumerate(counts):
        table += [(g, r, start + count) for r in range(start, start + count, block_m)]
        start += count
    return torch.tensor(table, dtype=torch.int32, device="cuda").reshape(-1)


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel on min(#SMs, #tiles) programs; returns C."""
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    k, n = a.shape[1], c.shape[1]
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    table = _tile_table(inputs["counts"], bm)
    row_blocks = table.numel() // 3
    grid = (min(num_sms(), row_blocks * triton.cdiv(n, bn)),)
    KERNEL[grid](tma(a, [bm, bk]), tma(b, [bn, bk]), c, table, row_blocks, n, k, **config)
    return c


def reference(inputs: dict[str, Any]) -> Any:
    """Per-group A_g @ B_g^T in fp32, concatenated."""
    import torch

    a, b, n = inputs["a"].float(), inputs["b"].float(), inputs["c"].shape[1]
    out, start = [], 0
    for g, count in enumerate(inputs["counts"]):
        out.append(a[start : start + count] @ b[g * n : (g + 1) * n].T)
        start += count
    return torch.cat(out)

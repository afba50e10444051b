"""Row reduction without any MMA: reciprocal RMS of each row (RMSNorm statistics).

rstd[r] = 1 / sqrt(mean(x[r, :]^2) + eps). The column loop is tagged ``warp_specialize``
although it has nothing to overlap with a tensor core; it is the corpus's "should not be
specialized" case.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import randn, signature_of


@triton.jit
def row_reduce_kernel(
    x_ptr,
    rstd_ptr,
    M,
    N,
    stride_m,
    eps,
    BLOCK_R: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ptrs = x_ptr + rows[:, None] * stride_m
    sum_sq = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N, warp_specialize=True):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(row_ptrs + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        sum_sq += tl.sum(x * x, axis=1)
    tl.store(rstd_ptr + rows, tl.math.rsqrt(sum_sq / N + eps), mask=rows < M)


KERNEL = row_reduce_kernel

CONFIGS: dict[str, dict] = {
    "r4_n1024_w4_s3": dict(BLOCK_R=4, BLOCK_N=1024, num_warps=4, num_stages=3),
    "r2_n2048_w8_s2": dict(BLOCK_R=2, BLOCK_N=2048, num_warps=8, num_stages=2),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("N", "stride_m")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(row_reduce_kernel, rstd_ptr="*fp32", eps="fp32")


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """size rows of size columns."""
    import torch

    return {
        "x": randn((size, size), torch.float16, seed),
        "rstd": torch.empty((size,), device="cuda", dtype=torch.float32),
        "eps": 1e-6,
    }


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns rstd."""
    x = inputs["x"]
    m, n = x.shape
    grid = (triton.cdiv(m, config["BLOCK_R"]),)
    KERNEL[grid](x, inputs["rstd"], m, n, x.stride(0), inputs["eps"], **config)
    return inputs["rstd"]


def reference(inputs: dict[str, Any]) -> Any:
    """1 / sqrt(mean(x^2) + eps) per row in fp32."""
    import torch

    x = inputs["x"].float()
    return torch.rsqrt((x * x).mean(dim=1) + inputs["eps"])

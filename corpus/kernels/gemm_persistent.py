"""Persistent FP16 TMA GEMM with a fused bias + activation epilogue.

Each program walks output tiles with a stride of the grid size; the tile loop carries
``warp_specialize`` and holds the K loop plus the epilogue. ``FLATTEN`` asks Triton to fuse
the two loops into one (``tl.range(..., flatten=True)``).
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import grouped_tile, num_sms, randn, tma

_SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
_LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _activate(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    elif ACTIVATION == "gelu":
        # tanh-approximated GELU, tanh(y) = 1 - 2 / (exp(2y) + 1)
        y = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        tanh_y = 1.0 - 2.0 / (tl.exp2(2.0 * _LOG2E * y) + 1.0)
        x = 0.5 * x * (1.0 + tanh_y)
    return x


@triton.jit
def gemm_persistent_kernel(
    a_desc,
    b_desc,
    c_desc,
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


KERNEL = gemm_persistent_kernel

CONFIGS: dict[str, dict] = {
    "t128x128x64_gelu_w4_s3": dict(
        BLOCK_M=128,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        ACTIVATION="gelu",
        FLATTEN=False,
        num_warps=4,
        num_stages=3,
    ),
    "t128x256x64_relu_w8_s3": dict(
        BLOCK_M=128,
        BLOCK_N=256,
        BLOCK_K=64,
        GROUP_M=8,
        ACTIVATION="relu",
        FLATTEN=False,
        num_warps=8,
        num_stages=3,
    ),
    "t128x128x64_gelu_flat_w4_s4": dict(
        BLOCK_M=128,
        BLOCK_N=128,
        BLOCK_K=64,
        GROUP_M=8,
        ACTIVATION="gelu",
        FLATTEN=True,
        num_warps=4,
        num_stages=4,
    ),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    return {
        "a_desc": f"tensordesc<fp16[{bm},{bk}]>",
        "b_desc": f"tensordesc<fp16[{bn},{bk}]>",
        "c_desc": f"tensordesc<fp16[{bm},{bn}]>",
        "bias_ptr": "*fp16",
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "BLOCK_M": "constexpr",
        "BLOCK_N": "constexpr",
        "BLOCK_K": "constexpr",
        "GROUP_M": "constexpr",
        "ACTIVATION": "constexpr",
        "FLATTEN": "constexpr",
    }


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """Square problem M = N = K = size."""
    import torch

    return {
        "a": randn((size, size), torch.float16, seed),
        "b": randn((size, size), torch.float16, seed + 1),
        "bias": randn((size,), torch.float16, seed + 2),
        "c": torch.empty((size, size), device="cuda", dtype=torch.float16),
        "activation": config["ACTIVATION"],
    }


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel on min(#SMs, #tiles) programs; returns C."""
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, k), n = a.shape, b.shape[0]
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    grid = (min(num_sms(), tiles),)
    KERNEL[grid](
        tma(a, [bm, bk]),
        tma(b, [bn, bk]),
        tma(c, [bm, bn]),
        inputs["bias"],
        m,
        n,
        k,
        **config,
    )
    return c


def reference(inputs: dict[str, Any]) -> Any:
    """activation(A @ B^T + bias) in fp32."""
    import torch

    x = inputs["a"].float() @ inputs["b"].float().T + inputs["bias"].float()[None, :]
    if inputs["activation"] == "relu":
        return torch.relu(x)
    if inputs["activation"] == "gelu":
        return torch.nn.functional.gelu(x, approximate="tanh")
    return x

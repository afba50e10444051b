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

from corpus.kernels._common import gemm_config, gemm_signature, grouped_tile, launch_gemm, randn

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
    "t128x128x64_gelu_w4_s3": gemm_config(128, 128, 64, 4, 3, ACTIVATION="gelu", FLATTEN=False),
    "t128x256x64_relu_w8_s3": gemm_config(128, 256, 64, 8, 3, ACTIVATION="relu", FLATTEN=False),
    "t128x128x64_gelu_flat_w4_s4": gemm_config(128, 128, 64, 4, 4, ACTIVATION="gelu", FLATTEN=True),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("M", "N", "K")


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return gemm_signature(gemm_persistent_kernel, config)


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
    return launch_gemm(KERNEL, config, inputs, "bias", persistent=True)


def reference(inputs: dict[str, Any]) -> Any:
    """activation(A @ B^T + bias) in fp32."""
    import torch

    x = inputs["a"].float() @ inputs["b"].float().T + inputs["bias"].float()[None, :]
    if inputs["activation"] == "relu":
        return torch.relu(x)
    if inputs["activation"] == "gelu":
        return torch.nn.functional.gelu(x, approximate="tanh")
    return x

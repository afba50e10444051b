"""Flash-attention forward (fp16, TMA) with its KV loop body unrolled UNROLL times.

The loop of ``attention_fwd`` (non-causal), written out UNROLL times inside the
warp-specialized loop: each iteration takes UNROLL key blocks one after the other, so the
loop has UNROLL times the loads, MMAs and softmax steps. This is how a kernel author
unrolls an inner loop by hand, and it gives loops of any size from one kernel: the scale
benchmark (``benchmarks/cpu/bench_scale.py``) dumps it for growing UNROLL and times the
partitioners on the result. It is not part of the dumped corpus (``KERNEL_MODULES``).

N_CTX must be a multiple of BLOCK_N * UNROLL. The GPU helpers need torch and a GPU; they
have not been run on one.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import attention_fwd
from corpus.kernels.attention_fwd import LOG2E, _softmax_update


@triton.jit
def attention_unrolled_kernel(
    q_desc,
    k_desc,
    v_desc,
    o_desc,
    sm_scale,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    UNROLL: tl.constexpr,
):
    off_m = tl.program_id(0) * BLOCK_M
    row_base = tl.program_id(1) * N_CTX
    qk_scale = sm_scale * LOG2E

    q = q_desc.load([row_base + off_m, 0])
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for start_n in tl.range(0, N_CTX, BLOCK_N * UNROLL, warp_specialize=True):
        for u in tl.static_range(UNROLL):
            row = row_base + start_n + u * BLOCK_N
            k = k_desc.load([row, 0])
            s = tl.dot(q, k.T)
            p, alpha, m_i, l_i = _softmax_update(s, m_i, l_i, qk_scale)
            v = v_desc.load([row, 0])
            acc = tl.dot(p, v, acc * alpha[:, None])
    o_desc.store([row_base + off_m, 0], (acc / l_i[:, None]).to(tl.float16))


KERNEL = attention_unrolled_kernel


def config(d: int, bm: int, bn: int, warps: int, stages: int, unroll: int) -> dict:
    """One configuration: head dim, tile sizes, warps, stages and the unroll factor."""
    return dict(
        HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, UNROLL=unroll, num_warps=warps, num_stages=stages
    )


def config_name(cfg: dict) -> str:
    """The name `CONFIGS` files a configuration under, e.g. ``d64_m128n64_w4_s3_u2``."""
    return (
        f"d{cfg['HEAD_DIM']}_m{cfg['BLOCK_M']}n{cfg['BLOCK_N']}"
        f"_w{cfg['num_warps']}_s{cfg['num_stages']}_u{cfg['UNROLL']}"
    )


def _configs() -> dict[str, dict]:
    # The corpus's d64 tile; a 32-wide one whose tensor memory holds 5 unrolled steps on
    # sm_100; a 16-wide one whose buffers fit shared memory 107 times over on sm_90.
    tiles = [(64, 128, 64, 4, 3), (32, 128, 32, 4, 2), (16, 128, 16, 4, 2)]
    unrolls = (1, 2, 3, 4, 5, 8, 16, 32, 64, 96, 107, 128)
    found = [config(*tile, u) for tile in tiles for u in unrolls]
    return {config_name(c): c for c in found}


CONFIGS: dict[str, dict] = _configs()

DIVISIBLE_ARGS: tuple[str, ...] = ("N_CTX",)


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config: attention_fwd's, without the log-sum-exp output
    and the causal variants, with UNROLL."""
    fwd = attention_fwd.signature(config)
    dropped = ("lse_ptr", "CAUSAL", "AHEAD")
    return {**{k: v for k, v in fwd.items() if k not in dropped}, "UNROLL": "constexpr"}


def make_inputs(config: dict, size: int, seed: int) -> dict[str, Any]:
    """As attention_fwd's, non-causal; `size` must be a multiple of BLOCK_N * UNROLL."""
    if size % (config["BLOCK_N"] * config["UNROLL"]):
        raise ValueError(f"N_CTX {size} is not a multiple of BLOCK_N * UNROLL")
    return attention_fwd.make_inputs({**config, "CAUSAL": False}, size, seed)


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns O as [Z, H, N_CTX, HEAD_DIM]."""
    return attention_fwd.launch_kernel(KERNEL, config, inputs)


reference = attention_fwd.reference

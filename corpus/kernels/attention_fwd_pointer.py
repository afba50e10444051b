"""attention_fwd with pointer loads (no TMA): flash-attention forward, fp16, non-causal and
causal, S one block ahead (``AHEAD``) or not.

The same computation, loop structure, inputs and reference as ``attention_fwd``; Q, K, V, O
are [Z * H * N_CTX, HEAD_DIM] row-major, loaded and stored through pointers. Loads are masked
to the head's rows (N_CTX a multiple of the blocks, as for ``attention_fwd``), so the blocks
the ahead loop reads past either end are zeros. GPU helpers need torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import _common, attention_fwd
from corpus.kernels.attention_fwd import LOG2E, _softmax_update


@triton.jit
def _load_block(ptr, row_base, start, N_CTX, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Rows [start, start + BLOCK) of one head, zeros outside [0, N_CTX)."""
    pos = start + tl.arange(0, BLOCK)
    offs = (row_base + pos)[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    inside = ((pos >= 0) & (pos < N_CTX))[:, None]
    return tl.load(ptr + offs, mask=inside, other=0.0)


@triton.jit
def _kv_loop(
    acc,
    l_i,
    m_i,
    q,
    k_ptr,
    v_ptr,
    row_base,
    off_m,
    lo,
    hi,
    qk_scale,
    N_CTX,
    BLOCK_N: tl.constexpr,
    MASKED: tl.constexpr,
):
    BLOCK_M: tl.constexpr = q.shape[0]
    HEAD_DIM: tl.constexpr = q.shape[1]
    q_pos = off_m + tl.arange(0, BLOCK_M)
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=True):
        k = _load_block(k_ptr, row_base, start_n, N_CTX, BLOCK_N, HEAD_DIM)
        s = tl.dot(q, k.T)
        if MASKED:
            k_pos = start_n + tl.arange(0, BLOCK_N)
            s = tl.where(q_pos[:, None] >= k_pos[None, :], s, -1.0e6)
        p, alpha, m_i, l_i = _softmax_update(s, m_i, l_i, qk_scale)
        v = _load_block(v_ptr, row_base, start_n, N_CTX, BLOCK_N, HEAD_DIM)
        acc = tl.dot(p, v, acc * alpha[:, None])
    return acc, l_i, m_i


@triton.jit
def _kv_loop_ahead(
    acc, l_i, m_i, q, k_ptr, v_ptr, row_base, lo, hi, qk_scale, N_CTX, BLOCK_N: tl.constexpr
):
    """attention_fwd._kv_loop_ahead through pointers: S for block j, softmax and P·V for
    block j - 1, one uniform loop of (hi - lo) / BLOCK_N + 1 steps."""
    BLOCK_M: tl.constexpr = q.shape[0]
    HEAD_DIM: tl.constexpr = q.shape[1]
    s = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    m_i = tl.maximum(m_i, -1.0e30)  # finite, so exp2(s - m) of the -inf scores is 0, not NaN
    for start_n in tl.range(lo, hi + BLOCK_N, BLOCK_N, warp_specialize=True):
        k = _load_block(k_ptr, row_base, start_n, N_CTX, BLOCK_N, HEAD_DIM)
        s_next = tl.dot(q, k.T)
        p, alpha, m_i, l_i = _softmax_update(s, m_i, l_i, qk_scale)
        v = _load_block(v_ptr, row_base, start_n - BLOCK_N, N_CTX, BLOCK_N, HEAD_DIM)
        acc = tl.dot(p, v, acc * alpha[:, None])
        s = s_next
    return acc, l_i, m_i


@triton.jit
def attention_fwd_pointer_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    lse_ptr,
    sm_scale,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    AHEAD: tl.constexpr,
):
    off_m = tl.program_id(0) * BLOCK_M
    off_hz = tl.program_id(1)
    row_base = off_hz * N_CTX
    qk_scale = sm_scale * LOG2E

    q = _load_block(q_ptr, row_base, off_m, N_CTX, BLOCK_M, HEAD_DIM)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    kv = (k_ptr, v_ptr, row_base)
    if CAUSAL:
        # off-band: key blocks strictly left of this query block need no mask
        if AHEAD:
            acc, l_i, m_i = _kv_loop_ahead(
                acc, l_i, m_i, q, *kv, 0, off_m, qk_scale, N_CTX, BLOCK_N
            )
        else:
            acc, l_i, m_i = _kv_loop(
                acc, l_i, m_i, q, *kv, off_m, 0, off_m, qk_scale, N_CTX, BLOCK_N, False
            )
        # on-band: the key blocks that straddle the diagonal
        hi = off_m + BLOCK_M
        acc, l_i, m_i = _kv_loop(
            acc, l_i, m_i, q, *kv, off_m, off_m, hi, qk_scale, N_CTX, BLOCK_N, True
        )
    elif AHEAD:
        acc, l_i, m_i = _kv_loop_ahead(acc, l_i, m_i, q, *kv, 0, N_CTX, qk_scale, N_CTX, BLOCK_N)
    else:
        acc, l_i, m_i = _kv_loop(
            acc, l_i, m_i, q, *kv, off_m, 0, N_CTX, qk_scale, N_CTX, BLOCK_N, False
        )

    rows = off_m + tl.arange(0, BLOCK_M)
    tl.store(lse_ptr + row_base + rows, m_i + tl.math.log2(l_i), mask=rows < N_CTX)
    offs = (row_base + rows)[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    out = (acc / l_i[:, None]).to(tl.float16)
    tl.store(o_ptr + offs, out, mask=(rows < N_CTX)[:, None])


KERNEL = attention_fwd_pointer_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = _common.copy_configs(attention_fwd.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("N_CTX",)


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return _common.signature_of(attention_fwd_pointer_kernel, **attention_fwd.FP32_ARGS)


make_inputs = attention_fwd.make_inputs
reference = attention_fwd.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns O as [Z, H, N_CTX, HEAD_DIM]."""
    return attention_fwd.launch_kernel(KERNEL, config, inputs, inputs["lse"], form="pointer")

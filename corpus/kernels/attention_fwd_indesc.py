"""attention_fwd with its descriptors made inside the kernel (``tl.make_tensor_descriptor``),
as Triton's fused-attention tutorial makes them: flash-attention forward, fp16, non-causal and
causal, S one block ahead (``AHEAD``) or not.

The same computation, KV loops (``attention_fwd._kv_loop`` / ``_kv_loop_ahead``, which take
any descriptor), inputs and reference as ``attention_fwd`` (host descriptors). Q, K, V, O are
[Z * H * N_CTX, HEAD_DIM] row-major; the descriptors span all rows (Z * H, the grid's second
dimension, times N_CTX). The launch needs a global-scratch allocator (``triton.set_allocator``),
which ``launch`` sets. GPU helpers need torch and a GPU.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels import attention_fwd
from corpus.kernels._common import copy_configs, signature_of
from corpus.kernels.attention_fwd import LOG2E, _kv_loop, _kv_loop_ahead


@triton.jit
def attention_fwd_indesc_kernel(
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
    zhn = tl.num_programs(1) * N_CTX  # the rows of all heads: Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, [zhn, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, [zhn, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, [zhn, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, [zhn, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    off_m = tl.program_id(0) * BLOCK_M
    off_hz = tl.program_id(1)
    row_base = off_hz * N_CTX
    qk_scale = sm_scale * LOG2E

    q = q_desc.load([row_base + off_m, 0])
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    kv = (k_desc, v_desc)
    if CAUSAL:
        # off-band: key blocks strictly left of this query block need no mask
        if AHEAD:
            acc, l_i, m_i = _kv_loop_ahead(acc, l_i, m_i, q, *kv, row_base, 0, off_m, qk_scale)
        else:
            acc, l_i, m_i = _kv_loop(
                acc, l_i, m_i, q, *kv, row_base, off_m, 0, off_m, qk_scale, False
            )
        # on-band: the key blocks that straddle the diagonal
        hi = off_m + BLOCK_M
        acc, l_i, m_i = _kv_loop(acc, l_i, m_i, q, *kv, row_base, off_m, off_m, hi, qk_scale, True)
    elif AHEAD:
        acc, l_i, m_i = _kv_loop_ahead(acc, l_i, m_i, q, *kv, row_base, 0, N_CTX, qk_scale)
    else:
        acc, l_i, m_i = _kv_loop(acc, l_i, m_i, q, *kv, row_base, off_m, 0, N_CTX, qk_scale, False)

    rows = off_m + tl.arange(0, BLOCK_M)
    tl.store(lse_ptr + row_base + rows, m_i + tl.math.log2(l_i))
    o_desc.store([row_base + off_m, 0], (acc / l_i[:, None]).to(tl.float16))


KERNEL = attention_fwd_indesc_kernel

# The host-descriptor kernel's tiles.
CONFIGS: dict[str, dict] = copy_configs(attention_fwd.CONFIGS)

DIVISIBLE_ARGS: tuple[str, ...] = ("N_CTX",)


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    return signature_of(attention_fwd_indesc_kernel, **attention_fwd.FP32_ARGS)


make_inputs = attention_fwd.make_inputs
reference = attention_fwd.reference


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns O as [Z, H, N_CTX, HEAD_DIM]."""
    return attention_fwd.launch_kernel(KERNEL, config, inputs, inputs["lse"], form="kernel")

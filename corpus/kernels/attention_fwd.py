"""Flash-attention forward (fp16, TMA), non-causal and causal.

Q, K, V, O are [Z * H * N_CTX, HEAD_DIM] row-major; one program owns BLOCK_M query rows of one
(batch, head). The causal variant runs two KV loops, as kernel authors usually split it: the
off-band blocks left of the diagonal without a mask, then the on-band blocks with one. Every
KV loop asks for warp specialization. The row log-sum-exp (log2 domain) is stored for the
backward pass.

``AHEAD`` computes S = Q·Kᵀ one key block ahead, as FlashAttention-3's intra-warp-group
overlap does: each iteration issues the next block's S and then runs this block's softmax and
P·V (in the causal kernel, in the off-band loop). On sm_90, ws_solver's wait sinking
(``ws_solver.triton.rewrites.overlap``) lets that softmax run under the next S's wgmma; Triton's
pipeliner alone waits for it at once.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import desc, operands, randn, signature_of

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _softmax_update(s, m_i, l_i, qk_scale):
    """Online softmax of one block of raw scores Q·Kᵀ (max and sum kept in the log2 domain,
    scaled): (P as fp16, rescale factor, new max, new sum).

    The scale is applied inside the exponent's FMA (exp2(s·scale − m)) and to the row max
    alone, not to the whole tile first, as FlashAttention does: that saves a multiply per
    score. On the H200 the specialized kernel runs at the 700 W power cap, so the saved
    instructions are saved energy, and the clock the cap allows rises: +3.3% sustained
    (benchmarks/results/2026-11-29-gpu-power/results.md).
    """
    m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    p = tl.math.exp2(s * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    return p.to(tl.float16), alpha, m_new, l_i * alpha + tl.sum(p, 1)


@triton.jit
def _kv_loop(
    acc, l_i, m_i, q, k_desc, v_desc, row_base, off_m, lo, hi, qk_scale, MASKED: tl.constexpr
):
    BLOCK_M: tl.constexpr = q.shape[0]
    BLOCK_N: tl.constexpr = k_desc.block_shape[0]
    q_pos = off_m + tl.arange(0, BLOCK_M)
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=True):
        k = k_desc.load([row_base + start_n, 0])
        s = tl.dot(q, k.T)
        if MASKED:
            k_pos = start_n + tl.arange(0, BLOCK_N)
            s = tl.where(q_pos[:, None] >= k_pos[None, :], s, -1.0e6)
        p, alpha, m_i, l_i = _softmax_update(s, m_i, l_i, qk_scale)
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p, v, acc * alpha[:, None])
    return acc, l_i, m_i


@triton.jit
def _kv_loop_ahead(acc, l_i, m_i, q, k_desc, v_desc, row_base, lo, hi, qk_scale):
    """The unmasked KV loop with S computed one block ahead, in one uniform loop of
    (hi - lo) / BLOCK_N + 1 steps.

    Iteration j issues S for key block j and runs softmax and P·V for block j - 1. The first
    iteration's softmax sees scores of -inf against a finite running max, so its P is 0 and
    its rescale factor 1: it adds nothing. (A finite stand-in score does not work: the
    compiler fuses the scaling into the exponent's FMA, and at 1e30 the product's rounding
    error alone is 2^70, so P overflows.) The last iteration's S is not used. Neither end is
    peeled, so no load gets a buffer of its own and the loop's stages get all of shared
    memory (3 of 128×128 next to Q). The loads past either end read a neighbouring head's
    rows (finite, times P = 0) or, at the tensor's edges, TMA's zero fill.
    """
    BLOCK_N: tl.constexpr = k_desc.block_shape[0]
    BLOCK_M: tl.constexpr = q.shape[0]
    s = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    m_i = tl.maximum(m_i, -1.0e30)  # finite, so exp2(s - m) of the -inf scores is 0, not NaN
    for start_n in tl.range(lo, hi + BLOCK_N, BLOCK_N, warp_specialize=True):
        k = k_desc.load([row_base + start_n, 0])
        s_next = tl.dot(q, k.T)
        p, alpha, m_i, l_i = _softmax_update(s, m_i, l_i, qk_scale)
        v = v_desc.load([row_base + start_n - BLOCK_N, 0])
        acc = tl.dot(p, v, acc * alpha[:, None])
        s = s_next
    return acc, l_i, m_i


@triton.jit
def attention_fwd_kernel(
    q_desc,
    k_desc,
    v_desc,
    o_desc,
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

    q = q_desc.load([row_base + off_m, 0])
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    kv = (k_desc, v_desc)
    if CAUSAL:
        # off-band: key blocks strictly left of this query block need no mask
        if AHEAD:  # one empty step when off_m == 0: it adds nothing (see _kv_loop_ahead)
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


KERNEL = attention_fwd_kernel


def _config(
    d: int, bm: int, bn: int, causal: bool, warps: int, stages: int, ahead: bool = False
) -> dict:
    return dict(
        HEAD_DIM=d,
        BLOCK_M=bm,
        BLOCK_N=bn,
        CAUSAL=causal,
        AHEAD=ahead,
        num_warps=warps,
        num_stages=stages,
    )


CONFIGS: dict[str, dict] = {
    "d64_m128n64_w4_s3": _config(64, 128, 64, False, 4, 3),
    "d128_m128n128_w8_s2": _config(128, 128, 128, False, 8, 2),
    "d128_m128n128_w8_s3_ahead": _config(128, 128, 128, False, 8, 3, ahead=True),
    "causal_d64_m128n64_w4_s3": _config(64, 128, 64, True, 4, 3),
    "causal_d128_m128n128_w8_s2": _config(128, 128, 128, True, 8, 2),
    "causal_d128_m128n128_w8_s3_ahead": _config(128, 128, 128, True, 8, 3, ahead=True),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("N_CTX",)

# The fp32 arguments of the kernel and of its other forms (attention_fwd_indesc,
# attention_fwd_pointer, which take the fp16 tensors themselves).
FP32_ARGS: dict[str, str] = {"lse_ptr": "*fp32", "sm_scale": "fp32"}


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    d, bm, bn = config["HEAD_DIM"], config["BLOCK_M"], config["BLOCK_N"]
    q, kv = desc("fp16", bm, d), desc("fp16", bn, d)
    descs = {"q_desc": q, "k_desc": kv, "v_desc": kv, "o_desc": q}
    return signature_of(attention_fwd_kernel, **descs, **FP32_ARGS)


def make_inputs(
    config: dict, size: int, seed: int, batch: int = 4, heads: int = 8
) -> dict[str, Any]:
    """Z=batch, H=heads, N_CTX=size (a multiple of BLOCK_M), HEAD_DIM from the config."""
    import torch

    shape = (batch, heads, size, config["HEAD_DIM"])
    return {
        "q": randn(shape, torch.float16, seed),
        "k": randn(shape, torch.float16, seed + 1),
        "v": randn(shape, torch.float16, seed + 2),
        "o": torch.empty(shape, device="cuda", dtype=torch.float16),
        "lse": torch.empty(shape[:3], device="cuda", dtype=torch.float32),
        "sm_scale": config["HEAD_DIM"] ** -0.5,
        "causal": config["CAUSAL"],
    }


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns O as [Z, H, N_CTX, HEAD_DIM]."""
    return launch_kernel(KERNEL, config, inputs, inputs["lse"])


def launch_kernel(
    kernel: Any, config: dict, inputs: dict[str, Any], *outputs: Any, form: str = "host"
) -> Any:
    """Run an attention kernel taking (Q, K, V, O in `form`, *outputs, sm_scale, N_CTX,
    **config) on (query blocks, Z * H) programs; returns O. In the ``host`` form Q, K, V, O
    go as descriptors over [Z * H * N_CTX, HEAD_DIM]; the others take the tensors."""
    q, k, v, o = inputs["q"], inputs["k"], inputs["v"], inputs["o"]
    z, h, n, d = q.shape
    bm, bn = config["BLOCK_M"], config["BLOCK_N"]
    tensors = [t.reshape(z * h * n, d) for t in (q, k, v, o)] if form == "host" else (q, k, v, o)
    args = operands(form, tensors, [[b, d] for b in (bm, bn, bn, bm)])
    grid = (triton.cdiv(n, bm), z * h)
    kernel[grid](*args, *outputs, inputs["sm_scale"], n, **config)
    return o


def reference(inputs: dict[str, Any]) -> Any:
    """softmax(Q K^T * scale [+ causal mask]) V in fp32."""
    import torch

    q, k, v = (inputs[x].float() for x in ("q", "k", "v"))
    s = (q @ k.transpose(-1, -2)) * inputs["sm_scale"]
    if inputs["causal"]:
        n = s.shape[-1]
        keep = torch.ones(n, n, device=s.device, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, dim=-1) @ v

"""Flash-attention backward, the dK/dV part (fp16, TMA, non-causal).

One program owns BLOCK_N keys/values of one (batch, head) and loops over all query blocks,
recomputing P from the forward's log-sum-exp (log2 domain) and accumulating dV = P^T dO and
dK = dS^T Q. Four MMAs per iteration. ``delta`` is rowsum(O * dO), computed beforehand.
The GPU helpers (make_inputs / launch / reference) need torch and a GPU and are not tested
where the corpus is dumped.
"""

from __future__ import annotations

import math
from typing import Any

import triton
import triton.language as tl

from corpus.kernels._common import desc, randn, signature_of, tma

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def attention_bwd_dkdv_kernel(
    q_desc,
    k_desc,
    v_desc,
    do_desc,
    dk_desc,
    dv_desc,
    lse_ptr,
    delta_ptr,
    sm_scale,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_n = tl.program_id(0) * BLOCK_N
    off_hz = tl.program_id(1)
    row_base = off_hz * N_CTX
    qk_scale = sm_scale * LOG2E

    k = k_desc.load([row_base + start_n, 0])
    v = v_desc.load([row_base + start_n, 0])
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    for start_m in tl.range(0, N_CTX, BLOCK_M, warp_specialize=True):
        q = q_desc.load([row_base + start_m, 0])
        do = do_desc.load([row_base + start_m, 0])
        rows = row_base + start_m + tl.arange(0, BLOCK_M)
        lse = tl.load(lse_ptr + rows)
        delta = tl.load(delta_ptr + rows)
        p_t = tl.math.exp2(tl.dot(k, q.T) * qk_scale - lse[None, :])
        dv = tl.dot(p_t.to(tl.float16), do, dv)
        dp_t = tl.dot(v, do.T)
        ds_t = p_t * (dp_t - delta[None, :])
        dk = tl.dot(ds_t.to(tl.float16), q, dk)

    dk_desc.store([row_base + start_n, 0], (dk * sm_scale).to(tl.float16))
    dv_desc.store([row_base + start_n, 0], dv.to(tl.float16))


KERNEL = attention_bwd_dkdv_kernel

CONFIGS: dict[str, dict] = {
    "d64_n128m64_w4_s2": dict(HEAD_DIM=64, BLOCK_M=64, BLOCK_N=128, num_warps=4, num_stages=2),
    "d128_n128m64_w8_s2": dict(HEAD_DIM=128, BLOCK_M=64, BLOCK_N=128, num_warps=8, num_stages=2),
}

DIVISIBLE_ARGS: tuple[str, ...] = ("N_CTX",)


def signature(config: dict) -> dict[str, str]:
    """ASTSource signature for one config."""
    d, bm, bn = config["HEAD_DIM"], config["BLOCK_M"], config["BLOCK_N"]
    q, kv = desc("fp16", bm, d), desc("fp16", bn, d)
    descs = {"q_desc": q, "k_desc": kv, "v_desc": kv, "do_desc": q, "dk_desc": kv, "dv_desc": kv}
    fp32 = {"lse_ptr": "*fp32", "delta_ptr": "*fp32", "sm_scale": "fp32"}
    return signature_of(attention_bwd_dkdv_kernel, **descs, **fp32)


def make_inputs(
    config: dict, size: int, seed: int, batch: int = 4, heads: int = 8
) -> dict[str, Any]:
    """Z=batch, H=heads, N_CTX=size; LSE (log2 domain) and delta come from a torch forward."""
    import torch

    shape = (batch, heads, size, config["HEAD_DIM"])
    q, k, v, do = (randn(shape, torch.float16, seed + i) for i in range(4))
    sm_scale = config["HEAD_DIM"] ** -0.5
    s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    lse = torch.logsumexp(s, dim=-1) / math.log(2.0)
    o = torch.softmax(s, dim=-1) @ v.float()
    return {
        "q": q,
        "k": k,
        "v": v,
        "do": do,
        "lse": lse.contiguous(),
        "delta": (o * do.float()).sum(-1).contiguous(),
        "dk": torch.empty_like(k),
        "dv": torch.empty_like(v),
        "sm_scale": sm_scale,
    }


def launch(config: dict, inputs: dict[str, Any]) -> Any:
    """Run the kernel; returns (dK, dV) as [Z, H, N_CTX, HEAD_DIM]."""
    z, h, n, d = inputs["q"].shape
    bm, bn = config["BLOCK_M"], config["BLOCK_N"]
    names = ("q", "k", "v", "do", "dk", "dv")
    blocks = (bm, bn, bn, bm, bn, bn)
    descs = [
        tma(inputs[x].reshape(z * h * n, d), [b, d]) for x, b in zip(names, blocks, strict=True)
    ]
    grid = (triton.cdiv(n, bn), z * h)
    KERNEL[grid](*descs, inputs["lse"], inputs["delta"], inputs["sm_scale"], n, **config)
    return inputs["dk"], inputs["dv"]


def reference(inputs: dict[str, Any]) -> Any:
    """(dK, dV) of softmax(Q K^T * scale) V for upstream gradient dO, in fp32 autograd."""
    import torch

    q, k, v = (inputs[x].float().requires_grad_() for x in ("q", "k", "v"))
    p = torch.softmax((q @ k.transpose(-1, -2)) * inputs["sm_scale"], dim=-1)
    dk, dv = torch.autograd.grad(p @ v, (k, v), inputs["do"].float())
    return dk, dv

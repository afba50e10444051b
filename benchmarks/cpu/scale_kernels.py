"""Kernels of the scale benchmark's families (`benchmarks/cpu/bench_scale_families.py`).

Four Triton kernels written for the benchmark, not taken from the corpus, each with a
constexpr U that unrolls or tiles its warp-specialized loop so that one kernel gives loops
of many sizes:

- `attn_fwd`: flash-attention forward written another way than the corpus's (natural exp,
  K and V loaded together, the scale applied to S), U key blocks per iteration;
- `attn_bwd`: the dK/dV loop of attention backward, U query blocks per iteration;
- `gemm_epilogue`: a persistent GEMM, U output tiles per iteration of its loop, each a
  nested K loop and an epilogue with three outputs (C, relu(C + bias) and the row maxima);
- `gemm_grouped`: a persistent GEMM in grouped (swizzled) tile order whose nested K loop is
  unrolled U times, with a bias epilogue.

They are compiled only to the partitioner's input (`capture`: no GPU, and never run), for
sm_90 and sm_100 with the installed Triton.
"""

from __future__ import annotations

from dataclasses import dataclass

import triton
import triton.language as tl


@triton.jit
def attn_fwd(
    q_desc,
    k_desc,
    v_desc,
    o_desc,
    sm_scale,
    N_CTX,
    D: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    U: tl.constexpr,
):
    off_m = tl.program_id(0) * BM
    base = tl.program_id(1) * N_CTX
    q = q_desc.load([base + off_m, 0])
    acc = tl.zeros((BM, D), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    for start in tl.range(0, N_CTX, BN * U, warp_specialize=True):
        for u in tl.static_range(U):
            row = base + start + u * BN
            k = k_desc.load([row, 0])
            v = v_desc.load([row, 0])
            s = tl.dot(q, k.T) * sm_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
            m_i = m_new
    o_desc.store([base + off_m, 0], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def attn_bwd(
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
    D: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    U: tl.constexpr,
):
    start_n = tl.program_id(0) * BN
    base = tl.program_id(1) * N_CTX
    k = k_desc.load([base + start_n, 0])
    v = v_desc.load([base + start_n, 0])
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    for start_m in tl.range(0, N_CTX, BM * U, warp_specialize=True):
        for u in tl.static_range(U):
            row = base + start_m + u * BM
            q = q_desc.load([row, 0])
            do = do_desc.load([row, 0])
            rows = row + tl.arange(0, BM)
            lse = tl.load(lse_ptr + rows)
            delta = tl.load(delta_ptr + rows)
            p_t = tl.math.exp2(tl.dot(k, q.T) * sm_scale - lse[None, :])
            dv = tl.dot(p_t.to(tl.float16), do, dv)
            dp_t = tl.dot(v, do.T)
            ds_t = p_t * (dp_t - delta[None, :])
            dk = tl.dot(ds_t.to(tl.float16), q, dk)
    dk_desc.store([base + start_n, 0], (dk * sm_scale).to(tl.float16))
    dv_desc.store([base + start_n, 0], dv.to(tl.float16))


@triton.jit
def gemm_epilogue(
    a_desc,
    b_desc,
    c_desc,
    d_desc,
    bias_ptr,
    rowmax_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    U: tl.constexpr,
):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    step = tl.num_programs(0) * U
    for first in tl.range(tl.program_id(0) * U, tiles, step, warp_specialize=True):
        for u in tl.static_range(U):
            tile = first + u
            off_m = (tile // tiles_n) * BM
            off_n = (tile % tiles_n) * BN
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(0, K, BK):
                a = a_desc.load([off_m, k])
                b = b_desc.load([off_n, k])
                acc = tl.dot(a, b.T, acc)
            bias = tl.load(bias_ptr + off_n + tl.arange(0, BN))
            c_desc.store([off_m, off_n], acc.to(tl.float16))
            biased = acc + bias[None, :]
            d_desc.store([off_m, off_n], tl.maximum(biased, 0.0).to(tl.float16))
            tl.store(rowmax_ptr + off_m + tl.arange(0, BM), tl.max(biased, 1))


@triton.jit
def gemm_grouped(
    a_desc,
    b_desc,
    c_desc,
    bias_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP_M: tl.constexpr,
    U: tl.constexpr,
):
    pid_m_count = tl.cdiv(M, BM)
    pid_n_count = tl.cdiv(N, BN)
    tiles = pid_m_count * pid_n_count
    for tile in tl.range(tl.program_id(0), tiles, tl.num_programs(0), warp_specialize=True):
        group = tile // (GROUP_M * pid_n_count)
        first_m = group * GROUP_M
        rows = tl.minimum(pid_m_count - first_m, GROUP_M)
        off_m = (first_m + (tile % rows)) * BM
        off_n = ((tile % (GROUP_M * pid_n_count)) // rows) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK * U):
            for u in tl.static_range(U):
                a = a_desc.load([off_m, k + u * BK])
                b = b_desc.load([off_n, k + u * BK])
                acc = tl.dot(a, b.T, acc)
        bias = tl.load(bias_ptr + off_n + tl.arange(0, BN))
        c_desc.store([off_m, off_n], (acc + bias[None, :]).to(tl.float16))


@dataclass(frozen=True)
class Family:
    """One kernel of the benchmark: its signature for a tile, and the tile per target."""

    name: str
    kernel: object
    tiles: dict[str, dict]  # target -> constexprs (without U) and num_warps/num_stages

    def signature(self, tile: dict) -> dict[str, str]:
        return _SIGNATURES[self.name](tile)


def _attn_fwd_sig(t: dict) -> dict[str, str]:
    d, bm, bn = t["D"], t["BM"], t["BN"]
    descs = {"q": bm, "k": bn, "v": bn, "o": bm}
    sig = {f"{n}_desc": f"tensordesc<fp16[{rows},{d}]>" for n, rows in descs.items()}
    return {**sig, "sm_scale": "fp32", "N_CTX": "i32", **_const("D", "BM", "BN", "U")}


def _attn_bwd_sig(t: dict) -> dict[str, str]:
    d, bm, bn = t["D"], t["BM"], t["BN"]
    descs = {"q": bm, "k": bn, "v": bn, "do": bm, "dk": bn, "dv": bn}
    sig = {f"{n}_desc": f"tensordesc<fp16[{rows},{d}]>" for n, rows in descs.items()}
    scalars = {"lse_ptr": "*fp32", "delta_ptr": "*fp32", "sm_scale": "fp32", "N_CTX": "i32"}
    return {**sig, **scalars, **_const("D", "BM", "BN", "U")}


def _gemm_descs(t: dict, outputs: tuple[str, ...]) -> dict[str, str]:
    bm, bn, bk = t["BM"], t["BN"], t["BK"]
    sig = {"a_desc": f"tensordesc<fp16[{bm},{bk}]>", "b_desc": f"tensordesc<fp16[{bn},{bk}]>"}
    return {**sig, **{f"{o}_desc": f"tensordesc<fp16[{bm},{bn}]>" for o in outputs}}


def _gemm_epilogue_sig(t: dict) -> dict[str, str]:
    ptrs = {"bias_ptr": "*fp32", "rowmax_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    return {**_gemm_descs(t, ("c", "d")), **ptrs, **_const("BM", "BN", "BK", "U")}


def _gemm_grouped_sig(t: dict) -> dict[str, str]:
    ptrs = {"bias_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    return {**_gemm_descs(t, ("c",)), **ptrs, **_const("BM", "BN", "BK", "GROUP_M", "U")}


def _const(*names: str) -> dict[str, str]:
    return dict.fromkeys(names, "constexpr")


_SIGNATURES = {
    "attn_fwd": _attn_fwd_sig,
    "attn_bwd": _attn_bwd_sig,
    "gemm_epilogue": _gemm_epilogue_sig,
    "gemm_grouped": _gemm_grouped_sig,
}
_SMALL_ATTN = {"D": 32, "BM": 128, "BN": 32, "num_warps": 4, "num_stages": 2}
_TINY_ATTN = {"D": 16, "BM": 128, "BN": 16, "num_warps": 4, "num_stages": 2}
_GEMM = {"BM": 128, "BN": 64, "BK": 64, "num_warps": 4, "num_stages": 3}
_SMALL_GEMM = {"BM": 64, "BN": 32, "BK": 32, "num_warps": 4, "num_stages": 2}
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("attn_fwd", attn_fwd, {"sm100": _SMALL_ATTN, "sm90": _TINY_ATTN}),
        Family("attn_bwd", attn_bwd, {"sm100": _SMALL_ATTN, "sm90": _TINY_ATTN}),
        Family("gemm_epilogue", gemm_epilogue, {"sm100": _GEMM, "sm90": _SMALL_GEMM}),
        Family(
            "gemm_grouped",
            gemm_grouped,
            {"sm100": {**_GEMM, "GROUP_M": 8}, "sm90": {**_SMALL_GEMM, "GROUP_M": 8}},
        ),
    )
}
OPTIONS = ("num_warps", "num_stages")


def capture(family: str, target: str, unroll: int) -> str:
    """The family's loop at `unroll` for `target` ("sm90"/"sm100") as TTGIR at the
    partitioner's input, with file paths made machine-independent."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from corpus import dump

    fam = FAMILIES[family]
    tile = {**fam.tiles[target], "U": unroll}
    sig = fam.signature(tile)
    constexprs = {k: v for k, v in tile.items() if k not in OPTIONS}
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, (n, ty) in enumerate(sig.items())
        if ty.startswith("*") or n in ("N_CTX", "M", "N", "K")
    }
    src = ASTSource(fam.kernel, sig, constexprs=constexprs, attrs=attrs)
    sink: dict[str, str] = {}
    options = {k: tile[k] for k in OPTIONS}
    try:
        with dump._capture_hook(sink, dump.until_partition):
            triton.compile(src, target=GPUTarget("cuda", dump.TARGETS[target], 32), options=options)
    except dump._StopAtPartitionPoint:
        pass
    if "text" not in sink:
        raise RuntimeError(f"{family} u{unroll} {target}: no TTGIR captured")
    return dump.relativize_locs(sink["text"], dump.path_prefixes())

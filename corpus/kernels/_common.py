"""Helpers shared by the corpus kernels: tile swizzling (device), and on the host signatures,
configs, inputs and launches, for each form a kernel reads its operands in (``FORMS``).

Torch is imported lazily: it and a GPU are not available where the corpus is dumped, so the
inputs and launches are only exercised by GPU runs."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl


@triton.jit
def grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Map a linear tile id to (pid_m, pid_n), walking GROUP_M row-tiles at a time for L2 reuse."""
    tiles_per_group = GROUP_M * num_pid_n
    group = tile_id // tiles_per_group
    first_m = group * GROUP_M
    rows = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % tiles_per_group) % rows
    pid_n = (tile_id % tiles_per_group) // rows
    return pid_m, pid_n


def tma(t: Any, block: list[int]) -> Any:
    """Host TMA descriptor over a contiguous tensor."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor.from_tensor(t, block)


def set_scratch_allocator() -> None:
    """Descriptors made in a kernel (``tl.make_tensor_descriptor``) live in global scratch
    memory that the launch allocates through ``triton.set_allocator``."""
    import torch

    def alloc(size: int, alignment: int, stream: Any) -> Any:
        return torch.empty(size, device="cuda", dtype=torch.int8)

    triton.set_allocator(alloc)


def generator(seed: int) -> Any:
    """A CUDA torch generator seeded for reproducible inputs."""
    import torch

    return torch.Generator(device="cuda").manual_seed(seed)


def randn(shape: tuple[int, ...], dtype: Any, seed: int, scale: float = 1.0) -> Any:
    """Seeded normal CUDA tensor of the given dtype (fp8 goes through fp32)."""
    import torch

    x = torch.randn(shape, device="cuda", generator=generator(seed)) * scale
    return x.to(dtype)


def num_sms() -> int:
    """Streaming multiprocessors of the current GPU."""
    import torch

    return torch.cuda.get_device_properties(0).multi_processor_count


FORMS: tuple[str, ...] = ("host", "kernel", "pointer")


def operands(form: str, tensors: Any, blocks: Any) -> list:
    """A kernel's tensor arguments in one of the ``FORMS`` (corpus/configspace.py's): TMA
    descriptors made here over `tensors`, one block of `blocks` each (``host``), or the
    tensors themselves, for descriptors the kernel makes (``kernel``: this sets the
    global-scratch allocator they live in) or for pointer loads (``pointer``)."""
    if form == "host":
        return [tma(t, block) for t, block in zip(tensors, blocks, strict=True)]
    if form not in FORMS:
        raise ValueError(f"form {form!r}: not one of {', '.join(FORMS)}")
    if form == "kernel":
        set_scratch_allocator()
    return list(tensors)


def copy_configs(configs: dict[str, dict]) -> dict[str, dict]:
    """A family's configs for another of its forms: the same tiles, each dict a copy."""
    return {name: dict(config) for name, config in configs.items()}


def signature_of(kernel: Any, **types: str) -> dict[str, str]:
    """The ASTSource signature of a corpus kernel, in its parameters' order: the type `types`
    gives a parameter, else ``constexpr`` for a constexpr one, ``*fp16`` for a pointer
    (``*_ptr``) and ``i32`` for the rest (sizes and strides)."""
    params = kernel.params
    unknown = set(types) - {p.name for p in params}
    if unknown:
        raise KeyError(f"{kernel.__name__} has no parameter {', '.join(sorted(unknown))}")

    def default(name: str, is_constexpr: bool) -> str:
        if is_constexpr:
            return "constexpr"
        return "*fp16" if name.endswith("_ptr") else "i32"

    return {p.name: types.get(p.name) or default(p.name, p.is_constexpr) for p in params}


def desc(element: str, rows: int, cols: int) -> str:
    """The signature type of a host TMA descriptor of `rows` x `cols` blocks of `element`."""
    return f"tensordesc<{element}[{rows},{cols}]>"


def gemm_config(bm: int, bn: int, bk: int, warps: int, stages: int, **constexprs: Any) -> dict:
    """A GEMM config: BLOCK_M x BLOCK_N x BLOCK_K tiles walked GROUP_M = 8 row-tiles at a time
    (``grouped_tile``), the kernel's other `constexprs`, then the compile options."""
    tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
    return {**tile, **constexprs, "num_warps": warps, "num_stages": stages}


def gemm_signature(
    kernel: Any, config: dict, element: str = "fp16", out: str = "fp16", **types: str
) -> dict[str, str]:
    """``signature_of`` a GEMM taking host descriptors: A [BLOCK_M, BLOCK_K] and
    B [BLOCK_N, BLOCK_K] blocks of `element`, C [BLOCK_M, BLOCK_N] of `out`; `types` for the
    other arguments (or another C)."""
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    descs = {
        "a_desc": desc(element, bm, bk),
        "b_desc": desc(element, bn, bk),
        "c_desc": desc(out, bm, bn),
    }
    return signature_of(kernel, **{**descs, **types})


def square_gemm_inputs(
    size: int, seed: int, element: str = "float16", scale: float = 1.0
) -> dict[str, Any]:
    """Square problem M = N = K = size: A and B of the torch dtype named `element` (seeds
    `seed` and `seed + 1`, times `scale`) and an empty fp16 C."""
    import torch

    dtype = getattr(torch, element)
    return {
        "a": randn((size, size), dtype, seed, scale),
        "b": randn((size, size), dtype, seed + 1, scale),
        "c": torch.empty((size, size), device="cuda", dtype=torch.float16),
    }


# The scale arguments of the fp8 GEMMs (gemm_fp8's forms, gemm_cond_reset): fp32 per row of A
# and per column of B.
SCALES: dict[str, str] = {"a_scale_ptr": "*fp32", "b_scale_ptr": "*fp32"}


def scaled_inputs(size: int, seed: int, scales: tuple[int, ...]) -> dict[str, Any]:
    """Square problem M = N = K = size in fp8 (e4m3) with positive fp32 scales of shape
    `scales` for A and for B (seed `seed + 2`) and an empty bf16 C."""
    import torch

    gen = generator(seed + 2)
    return {
        "a": randn((size, size), torch.float8_e4m3fn, seed),
        "b": randn((size, size), torch.float8_e4m3fn, seed + 1),
        "a_scale": torch.rand(scales, device="cuda", generator=gen) + 0.5,
        "b_scale": torch.rand(scales, device="cuda", generator=gen) + 0.5,
        "c": torch.empty((size, size), device="cuda", dtype=torch.bfloat16),
    }


def launch_gemm(
    kernel: Any,
    config: dict,
    inputs: dict[str, Any],
    *extras: str,
    form: str = "host",
    persistent: bool = False,
) -> Any:
    """Launch a corpus GEMM taking (A, B, C in `form`, the inputs named `extras`, M, N, K),
    then the row strides of A, B and C in the ``pointer`` form; returns C (M x N, which gives
    N). One program per C tile, or min(#SMs, #tiles) for a `persistent` kernel (it strides
    over the tiles)."""
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, k), n = a.shape, c.shape[1]
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    grid = (min(num_sms(), tiles),) if persistent else (tiles,)
    args = operands(form, (a, b, c), ([bm, bk], [bn, bk], [bm, bn]))
    strides = (a.stride(0), b.stride(0), c.stride(0)) if form == "pointer" else ()
    kernel[grid](*args, *(inputs[x] for x in extras), m, n, k, *strides, **config)
    return c

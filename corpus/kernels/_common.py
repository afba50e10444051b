"""Helpers shared by the corpus kernels: tile swizzling (device) and torch glue (host).

The host helpers import torch lazily; torch and a GPU are not available where the corpus is
dumped, so they are only exercised by GPU runs.
"""

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


def launch_scaled_gemm(kernel: Any, config: dict, inputs: dict[str, Any]) -> Any:
    """Launch a TMA GEMM taking (A, B, C descriptors, A/B scales, M, N, K); returns C."""
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, k), n = a.shape, b.shape[0]
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    kernel[grid](
        tma(a, [bm, bk]),
        tma(b, [bn, bk]),
        tma(c, [bm, bn]),
        inputs["a_scale"],
        inputs["b_scale"],
        m,
        n,
        k,
        **config,
    )
    return c

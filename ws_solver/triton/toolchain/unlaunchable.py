"""Lowered kernels that compile and would fail at launch: one that needs more tensor memory
or shared memory than the SM gives it, and one that LLVM reduced to a lone trap. The lowering
guard's child fails a module for any of them (the drop-in then falls back, and stock's kernel
is then no candidate); the drop-in refuses a final kernel over the SM's tensor memory."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...model.target import SM100

LONE_TRAP = "Triton lowered the kernel to a lone trap (llvm.trap): it would fail at launch"
_KERNEL_HEAD = re.compile(r"^define ptx_kernel [^\n]*\{\n", re.MULTILINE)
_TRAP_ONLY = {"call void @llvm.trap()", "tail call void @llvm.trap()", "unreachable"}


class TensorMemoryOverflow(RuntimeError):
    """The drop-in's final kernel needs more tensor-memory columns than the SM has (sm_100)."""


def unlaunchable(metadata: dict, llir: str) -> str:
    """Why a module make_llir lowered (its `metadata` and LLVM IR) cannot run; "" when it can."""
    return (
        tensor_memory_overflow(metadata)
        or shared_memory_overflow(metadata)
        or (LONE_TRAP if lone_trap(llir) else "")
    )


def shared_memory_overflow(metadata: dict) -> str:
    """Why a lowered module cannot launch for its shared memory ("" when it fits): more than a
    block may take on sm_90 and sm_100 (Triton raises OutOfResources at the first launch).
    Stock Triton 3.6's two-consumer-group sm_90 kernels of 4-warp 128x256x64 GEMMs at 4
    stages need 262,632 B where the unspecialized kernel needs 196,640 B."""
    need = metadata.get("shared") or 0
    have = SM100.shared_memory_per_cta  # 227 KiB per block on sm_90 and sm_100 alike
    if need <= have:
        return ""
    return (
        f"the kernel needs {need} B of shared memory, more than a block's {have}: it would "
        "fail at launch (out of resources)"
    )


def tensor_memory_overflow(metadata: dict) -> str:
    """Why a lowered module cannot run: it needs more tensor-memory columns than the SM has
    ("" when it fits; a target without TMEM needs none). Triton 3.6 and 3.9 compile such a
    kernel without an error; its TMEM is never allocated and it traps at launch (3.9
    reduces it to a lone trap)."""
    need = metadata.get("tmem_size") or 0
    have = SM100.tmem_columns  # every SM with tensor memory has 512 columns
    if need <= have:
        return ""
    return (
        f"Triton's lowering needs {need} columns of tensor memory, more than the SM's {have}: "
        "the kernel would trap at launch"
    )


def lone_trap(llir: str) -> bool:
    """Whether a kernel of this LLVM IR does nothing but trap: LLVM, having found undefined
    behaviour on every path, keeps only `llvm.trap` (Triton 3.9 does this to attention_bwd
    d128's warp-specialized kernel on sm_100: it needed more tensor memory than the SM has)."""
    for body in _kernel_bodies(llir):
        statements = (
            line.split(", !dbg")[0].strip()
            for line in body.splitlines()
            if line.strip() and not line.strip().startswith(";")
        )
        first = next(statements, None)
        if first in _TRAP_ONLY and all(s in _TRAP_ONLY for s in statements):
            return True
    return False


def _kernel_bodies(llir: str) -> Iterator[str]:
    """Each kernel's body: the lines after its `define ptx_kernel ... {` line, up to the first
    line that starts with `}` (found by its rare `}`: a lazy regex to it, or a search for
    the frequent newline, takes milliseconds over a kernel's LLVM IR)."""
    pos = 0
    while (head := _KERNEL_HEAD.search(llir, pos)) is not None:
        start = end = head.end()
        while (end := llir.find("}", end)) > 0 and llir[end - 1] != "\n":
            end += 1
        if end < 0:
            return
        yield llir[start:end]
        pos = end + 1

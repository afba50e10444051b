"""A kernel that LLVM reduced to a lone trap, or that needs more tensor memory than the SM
has, is a failed lowering, not a kernel (`unlaunchable.lone_trap`,
`unlaunchable.tensor_memory_overflow`). Triton 3.9 reduces attention_bwd d128's
warp-specialized kernel on sm_100 to a lone trap: it needs 576 TMEM columns
(benchmarks/results/2026-12-02-tmem-handoffs)."""

from __future__ import annotations

import re

from ws_solver.triton.toolchain import unlaunchable as module
from ws_solver.triton.toolchain.unlaunchable import (
    LONE_TRAP,
    lone_trap,
    tensor_memory_overflow,
    unlaunchable,
)

TRAPPED = """\
; ModuleID = 'LLVMDialectModule'
define ptx_kernel void @k(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 !dbg !6 {
  tail call void @llvm.trap(), !dbg !16
  unreachable, !dbg !16
}

declare void @llvm.trap() #1
"""

WORKING = """\
define ptx_kernel void @k(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 {
  %3 = icmp slt i32 %1, 0
  br i1 %3, label %4, label %5

4:                                                ; preds = %2
  tail call void @llvm.trap()
  unreachable

5:                                                ; preds = %2
  store i32 %1, ptr addrspace(1) %0, align 4
  ret void
}
"""


def test_a_kernel_that_only_traps_is_caught() -> None:
    assert lone_trap(TRAPPED)
    assert lone_trap(WORKING + "\n" + TRAPPED.replace("@k(", "@other("))


def test_a_kernel_with_a_trap_on_one_path_is_not() -> None:
    assert not lone_trap(WORKING)
    assert not lone_trap("declare void @llvm.trap() #1\n")


def test_the_bodies_are_the_lazy_regex_s() -> None:
    """The scan for each body's closing line finds what the regex it replaced found."""
    lazy = re.compile(r"^define ptx_kernel [^\n]*\{\n(.*?)^\}", re.MULTILINE | re.DOTALL)
    head = "define ptx_kernel void @k() {\n"
    texts = [
        TRAPPED,
        WORKING + TRAPPED,
        head + "}\n",
        head + "  %a = {i32} x } y\n  unreachable\n}\n" + TRAPPED,
        head + "  unreachable\n",  # never closed
        "x " + head + "}\n",  # not at a line's start
        "",
    ]
    for text in texts:
        assert list(module._kernel_bodies(text)) == lazy.findall(text), text
    assert lone_trap(head + "  unreachable\n}\n") and not lone_trap(head + "}\n")


def test_a_module_over_the_sms_tensor_memory_is_caught() -> None:
    # make_llir's metadata: Triton 3.6 and 3.9 lower a module that needs more than 512 TMEM
    # columns without an error; the kernel traps at launch.
    why = tensor_memory_overflow({"tmem_size": 576})
    assert "576 columns of tensor memory, more than the SM's 512" in why
    assert tensor_memory_overflow({"tmem_size": 512}) == ""
    assert tensor_memory_overflow({"tmem_size": 0}) == ""  # sm_90: no tensor memory
    assert tensor_memory_overflow({}) == ""


def test_either_makes_a_module_unlaunchable() -> None:
    assert unlaunchable({"tmem_size": 128}, WORKING) == ""
    assert unlaunchable({"tmem_size": 128}, TRAPPED) == LONE_TRAP
    assert "576 columns" in unlaunchable({"tmem_size": 576}, TRAPPED)


def test_a_kernel_over_a_blocks_shared_memory_cannot_launch() -> None:
    """Stock Triton 3.6's two-consumer-group kernel of a 4-warp 128x256x64 GEMM at 4 stages
    needs 262,632 B (the unspecialized kernel 196,640 B): it is no candidate to keep."""
    from ws_solver.triton.toolchain.unlaunchable import shared_memory_overflow, unlaunchable

    assert shared_memory_overflow({"shared": 196_640}) == ""
    assert shared_memory_overflow({"shared": 232_448}) == ""
    why = shared_memory_overflow({"shared": 262_632})
    assert "262632 B of shared memory" in why and "232448" in why
    assert unlaunchable({"shared": 262_632}, "") == why

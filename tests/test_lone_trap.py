"""A kernel that LLVM reduced to a lone trap is a failed lowering, not a kernel
(`guard_server.lone_trap`). Triton 3.9 does this to attention_bwd d128's warp-specialized
kernel on sm_100 (benchmarks/results/2026-12-02-sm100-registers)."""

from __future__ import annotations

from ws_solver.triton.guard_server import lone_trap

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

"""ptxas's and cuobjdump's reports read into BinaryUsage, and the order of two kernels."""

from dataclasses import replace

import pytest

from ws_solver.triton.toolchain.binary_usage import (
    BinaryUsage,
    UsageUnavailable,
    parse_ptxas_log,
    parse_res_usage,
)
from ws_solver.triton.toolchain.sass_loops import LoopSpills

PTXAS_SPILLING = """\
ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized \
due to insufficient register resources for the wgmma pipeline in the function 'gemm_tma_kernel'
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm_tma_kernel' for 'sm_90a'
ptxas info    : Function properties for gemm_tma_kernel
    624 bytes stack frame, 1664 bytes spill stores, 1152 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 624 bytes cumulative stack size
"""

PTXAS_CLEAN = """\
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
"""


def test_ptxas_log_of_a_spilling_kernel():
    u = parse_ptxas_log(PTXAS_SPILLING)
    assert (u.registers, u.stack_bytes, u.spill_store_bytes, u.spill_load_bytes) == (
        255,
        624,
        1664,
        1152,
    )
    assert u.wgmma_serialized and u.spills
    assert u.summary() == "255 registers, 1664 B spilled, wgmmas serialized"


def test_ptxas_log_of_a_clean_kernel():
    u = parse_ptxas_log(PTXAS_CLEAN)
    assert u == BinaryUsage(168, 0, 0, 0, False)
    assert not u.spills and u.summary() == "168 registers, no spill"


def test_res_usage_line():
    line = "  REG:255 STACK:624 SHARED:1024 LOCAL:0 CONSTANT[0]:1144 TEXTURE:0 SURFACE:0"
    u = parse_res_usage("Resource usage:\n Function k:\n" + line)
    assert (u.registers, u.stack_bytes, u.spill_store_bytes) == (255, 624, None)
    assert u.spills


@pytest.mark.parametrize("reader", [parse_ptxas_log, parse_res_usage])
def test_unreadable_output_is_an_error(reader):
    with pytest.raises(UsageUnavailable):
        reader("ptxas fatal   : something else")


def test_kernels_without_loop_spills_are_ordered_by_spilled_bytes_alone():
    serialized = BinaryUsage(90, 0, 0, 0, True)  # the C7511 note without a spill
    clean = BinaryUsage(168, 0, 0, 0, False)
    spilling = BinaryUsage(255, 624, 1664, 1152, True)
    assert not serialized.worse_than(clean) and not clean.worse_than(serialized)
    assert spilling.worse_than(clean) and not clean.worse_than(spilling)
    assert BinaryUsage(255, 0, 2000, 0, False).worse_than(spilling)  # more spill stores
    assert not serialized.spills and spilling.spills


def with_hot(usage: BinaryUsage, hot: int, total: int = 20) -> BinaryUsage:
    return replace(usage, loop_spills=LoopSpills(loops=2, total=total, in_loops=total, hot=hot))


# Issue 48 (H100, Triton 3.9, persistent pointer GEMM t128x128x128 gelu flat w4 s2): stock
# spilled 72 B around its epilogue and ran 3.25 ms; Triton's partitioner's build spilled 36 B
# with its loop counter reloaded every K step and ran 5.35 ms.
STOCK_72 = with_hot(BinaryUsage(255, 72, 72, 72, False), hot=0, total=36)
TRITON_36 = with_hot(BinaryUsage(255, 32, 36, 44, False), hot=7, total=20)


def test_spills_in_hot_loops_weigh_before_bytes():
    assert TRITON_36.worse_than(STOCK_72) and not STOCK_72.worse_than(TRITON_36)
    assert not STOCK_72.relieved_by(TRITON_36)  # bytes alone said it did: 2 * 36 <= 72
    # Hot counts veto, they do not relieve on their own: 72 B is not half of 36 B.
    assert not TRITON_36.relieved_by(STOCK_72)
    clean = BinaryUsage(168, 0, 0, 0, False)
    assert clean.hot_spills == 0 and STOCK_72.relieved_by(clean)
    # Causal attention d128 m128n64 w4 under 3.6: 40 B with 5 hot is no relief of 56 B with 11.
    ours = with_hot(BinaryUsage(255, 56, 56, 56, False), hot=11)
    assert not ours.relieved_by(with_hot(BinaryUsage(255, 40, 40, 40, False), hot=5))


def test_bytes_relieve_unless_hot_counts_say_more():
    unknown = BinaryUsage(255, 72, 72, 72, False)
    assert unknown.hot_spills is None
    assert STOCK_72.relieved_by(with_hot(BinaryUsage(255, 36, 36, 36, False), hot=0))
    assert not STOCK_72.relieved_by(with_hot(BinaryUsage(255, 40, 40, 40, False), hot=0))
    assert unknown.relieved_by(TRITON_36)  # unknown on one side: bytes, as before
    half = with_hot(BinaryUsage(255, 36, 36, 36, False), hot=3)
    assert with_hot(STOCK_72, hot=3).relieved_by(half)  # half the bytes, no more hot
    assert not with_hot(STOCK_72, hot=2).relieved_by(half)  # half the bytes, more hot


def test_summary_and_json_with_and_without_loop_spills():
    assert TRITON_36.summary() == "255 registers, 36 B spilled, 7 spill instructions in hot loops"
    old = BinaryUsage(255, 72, 72, 72, False)
    assert "loop_spills" not in old.to_dict()  # the shape older readers know
    assert BinaryUsage.from_dict(old.to_dict()) == old
    assert BinaryUsage.from_dict(TRITON_36.to_dict()) == TRITON_36
    assert BinaryUsage.from_dict(old.to_dict() | {"later_field": 1}) == old

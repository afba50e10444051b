"""ptxas's and cuobjdump's reports read into BinaryUsage, and the order of two kernels."""

import pytest

from ws_solver.triton.toolchain.binary_usage import (
    BinaryUsage,
    UsageUnavailable,
    parse_ptxas_log,
    parse_res_usage,
)

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


def test_kernels_are_ordered_by_spilled_bytes_alone():
    serialized = BinaryUsage(90, 0, 0, 0, True)  # the C7511 note without a spill
    clean = BinaryUsage(168, 0, 0, 0, False)
    spilling = BinaryUsage(255, 624, 1664, 1152, True)
    assert not serialized.worse_than(clean) and not clean.worse_than(serialized)
    assert spilling.worse_than(clean) and not clean.worse_than(spilling)
    assert BinaryUsage(255, 0, 2000, 0, False).worse_than(spilling)  # more spill stores
    assert not serialized.spills and spilling.spills

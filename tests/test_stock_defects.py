"""Stock's kernels that compute with another tile's rows are read off their TTGIR
(ws_solver.triton.toolchain.stock_defects) and are no candidate of the decision check."""

from __future__ import annotations

import pytest

from ws_solver.triton.toolchain.stock_defects import doubled_partition_offset

# Two consumer partitions of a 128-row tile, as stock's sm_90 pass writes them; ROWS and BASE
# are the second partition's row range start and the offset its base adds.
REGIONS = """\
    partition0(%M_2: i32, %off: i32) num_warps(4) {{
      %c64_i32_14 = arith.constant {{async_task_id = array<i32: 1>}} 64 : i32 loc(#loc1)
      %rows_28 = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32>
      %rows_29 = tt.splat %off {{async_task_id = array<i32: 1>}} : i32 -> tensor<64xi32>
      %rows_30 = arith.addi %rows_29, %rows_28 {{async_task_id = array<i32: 1>}} : tensor<64xi32>
      ttg.warp_return
    }}
    partition1(%M_2: i32, %off: i32) num_warps(4) {{
      %c64_i32_14 = arith.constant {{async_task_id = array<i32: 2>}} {base} : i32 loc(#loc1)
      %59 = arith.addi %off, %c64_i32_14 {{async_task_id = array<i32: 2>}} : i32 loc(#loc45)
      %rows_28 = tt.make_range {{end = {end} : i32, start = {rows} : i32}} : tensor<64xi32>
      %rows_29 = tt.splat %59 {{async_task_id = array<i32: 2>}} : i32 -> tensor<64xi32>
      %rows_30 = arith.addi %rows_29, %rows_28 {{async_task_id = array<i32: 2>}} : tensor<64xi32>
      ttg.warp_return
    }}
"""


def _text(rows: int, base: int) -> str:
    return REGIONS.format(rows=rows, end=rows + 64, base=base)


def test_the_offset_applied_twice_is_found() -> None:
    why = doubled_partition_offset(_text(rows=64, base=64))
    assert why is not None and "start at 64 twice" in why


@pytest.mark.parametrize(("rows", "base"), [(0, 64), (64, 0), (64, 32)])
def test_an_offset_applied_once_is_not(rows: int, base: int) -> None:
    assert doubled_partition_offset(_text(rows=rows, base=base)) is None


def test_names_are_read_per_partition() -> None:
    """%59 means another value in each region: partition0's range from 64 plus a splat of its
    own %59 (a product) is no defect because partition1's %59 is `off + 64`."""
    text = _text(rows=0, base=64)
    first, second = text.split("    partition1(")
    first = first.replace("start = 0", "start = 64").replace("tt.splat %off", "tt.splat %59")
    first = first.replace(
        "      %rows_28", "      %59 = arith.muli %off, %c64_i32_14 : i32\n      %rows_28", 1
    )
    text = first + "    partition1(" + second
    assert doubled_partition_offset(text) is None
    assert doubled_partition_offset(text.replace("arith.muli %off", "arith.addi %off")) is not None


def test_a_kernel_without_partitions_has_none() -> None:
    assert doubled_partition_offset("module {\n  tt.func @k() {\n  }\n}\n") is None


@pytest.mark.triton
@pytest.mark.slow
def test_stocks_wrong_fp8_kernel_is_no_candidate() -> None:
    """sm_90, an fp8 GEMM with in-kernel descriptors, 128x256 tiles, 4 warps: stock's
    two-consumer-group kernel reads the second group's per-row scales from the next tile
    (wrong by 0.29 on the H100 under Triton 3.6 and 3.9). `optimal` does not keep it."""
    pytest.importorskip("triton")
    from triton_util import compile_corpus_kernel

    from corpus import configspace

    configspace.register(configspace.space("gemm_fp8_indesc"))
    from corpus import kernels as corpus_kernels

    config = corpus_kernels.load("gemm_fp8_indesc").CONFIGS["t128x256x64_w4_s4"]
    compiled = compile_corpus_kernel("gemm_fp8_indesc", config, "optimal", 90)
    report = compiled.metadata.ws_solver
    assert report["strategy_used"] != "stock"
    stock = report["decision"]["stock"]
    assert stock["status"] == "error" and "twice" in stock["reason"]

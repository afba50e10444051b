"""Loops that store their MMA tile inside the loop (persistent and grouped GEMMs): no shared
wgmma stall, and a specialized plan only above the tile-loop floor (model/decision.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.model.cost import evaluate
from ws_solver.model.cost_table import cost_table
from ws_solver.model.decision import (
    NO_FLOOR,
    TILE_LOOP_FLOOR,
    below_floor,
    specialize_floor,
    specializing_pays,
)
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.mma_stalls import stores_tile
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan
from ws_solver.pipeline.partition import SolveOptions, partition_text

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ttgir"
SLICE = ROOT / "corpus" / "configspace" / "ttgir-3.6"


def graphs(path: Path):
    module = ir.parse(path.read_text())
    return [build_graph(module, loop) for loop in ws_loops(module)]


@pytest.mark.parametrize(
    "path, stores",
    [
        (CORPUS / "gemm_persistent.t128x256x64_relu_w8_s3.sm90.ttgir", True),  # nested K loop
        (CORPUS / "gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm90.ttgir", True),  # flattened
        (CORPUS / "gemm_grouped.t64x128x64_w4_s4.sm90.ttgir", True),
        (CORPUS / "gemm_persistent.t128x256x64_relu_w8_s3.sm100.ttgir", True),  # tcgen05
        (CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir", False),  # the store is after it
        (CORPUS / "gemm_cond_reset.t128x256x64_g256_w8_s3.sm90.ttgir", False),
        (CORPUS / "attention_fwd.d128_m128n128_w8_s2.sm90.ttgir", False),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_stores_tile_marks_persistent_and_grouped_loops(path: Path, stores: bool) -> None:
    assert all(stores_tile(g) == stores for g in graphs(path))


def test_a_tile_loop_has_no_shared_stall() -> None:
    # The same 128-byte rows stall in the non-persistent GEMM and not in the persistent one.
    target = target_for("sm_90", "3.6.0")
    (plain,) = graphs(SLICE / "gemm_tma.t128x128x64_w8_s2.sm90.ttgir")
    (tile,) = graphs(SLICE / "gemm_persistent.t128x128x64_gelu_w8_s2.sm90.ttgir")
    assert cost_table(plain, target).stalling_wgmmas
    assert cost_table(tile, target).wgmmas and not cost_table(tile, target).stalling_wgmmas
    single = evaluate(single_partition_plan(tile, target), tile, target)
    assert "stall" not in single.bound_by


def test_floor_applies_to_tile_loops_only() -> None:
    target = target_for("sm_90", "3.6.0")
    (tile,) = graphs(CORPUS / "gemm_persistent.t128x256x64_relu_w8_s3.sm90.ttgir")
    (attention,) = graphs(CORPUS / "attention_fwd.d128_m128n128_w8_s2.sm90.ttgir")[:1]
    floor = specialize_floor(tile, target)
    assert floor.gain == TILE_LOOP_FLOOR
    assert specialize_floor(attention, target) == NO_FLOOR
    assert not specializing_pays(4456, 4476, floor)  # 0.45%: within the error
    assert specializing_pays(4456, 4476, NO_FLOOR)
    assert specializing_pays(4000, 4476, floor)  # 10.6%
    assert "0.4%" in below_floor(4456, 4476, floor)


@pytest.mark.parametrize("strategy", ["heuristic", "optimal"])
def test_persistent_gemm_with_a_small_modeled_gain_stays_unspecialized(strategy: str) -> None:
    # Measured on the H200 (Triton 3.6): specialized 1.697 ms, unspecialized 1.711 ms (0.8%).
    text = (CORPUS / "gemm_persistent.t128x256x64_relu_w8_s3.sm90.ttgir").read_text()
    options = SolveOptions(time_limit=5, cache=False, wall_clock=False)
    _, (report,) = partition_text(text, strategy, options=options, triton="3.6.0")
    assert not report.specialized
    assert "within the model's error" in report.reason

"""The kernel-level check of partition_module: a specialized loop must not make another loop
of its kernel spill (every loop runs under the register cap of the kernel's warp count)."""

from __future__ import annotations

from pathlib import Path

from ws_solver import ir
from ws_solver.heuristic import decide
from ws_solver.model.dfg import build_graphs
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import kernel_register_conflict, single_partition_plan
from ws_solver.pipeline.partition import SolveOptions, partition_module

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
TTGIR_39 = TTGIR.parent / "ttgir-3.9"
CAUSAL_AHEAD = "attention_fwd.causal_d128_m128n128_w8_s3_ahead.sm90.ttgir"
CAUSAL_PLAIN = "attention_fwd.causal_d128_m128n128_w8_s2.sm90.ttgir"
OPTIONS = SolveOptions(cache=False)


def _graphs(name: str):
    return build_graphs(ir.parse((TTGIR / name).read_text()))


def test_a_split_that_would_spill_the_ahead_loop_is_refused():
    """Causal attention with S one block ahead: the on-band loop alone would specialize
    (12 warps), but the off-band loop needs far more than the 168 registers that leaves."""
    ahead, on_band = _graphs(CAUSAL_AHEAD)
    sm90 = target_for("sm_90")
    split, _ = decide(on_band, sm90)
    assert split.specialized
    kept, _ = decide(ahead, sm90)
    assert not kept.specialized
    reason = kernel_register_conflict([(ahead, kept), (on_band, split)], sm90)
    assert reason and "12 warps" in reason and "168" in reason and "loop 0" in reason
    # without the split, or with both loops unspecialized, there is nothing to refuse
    none = single_partition_plan(on_band, sm90, "none")
    assert kernel_register_conflict([(ahead, kept), (on_band, none)], sm90) is None
    assert kernel_register_conflict([(on_band, split)], sm90) is None


def test_partition_module_keeps_that_kernel_unspecialized():
    for strategy in ("heuristic", "optimal"):
        module = ir.parse((TTGIR / CAUSAL_AHEAD).read_text())
        reports = partition_module(module, strategy, options=OPTIONS)
        assert [r.specialized for r in reports] == [False, False]
        assert "registers per thread" in reports[1].reason
        assert "tt.warp_specialize" not in module.print()


def test_a_kernel_whose_loops_all_specialize_is_left_alone():
    module = ir.parse((TTGIR / CAUSAL_PLAIN).read_text())
    reports = partition_module(module, "heuristic", options=OPTIONS)
    assert [r.specialized for r in reports] == [True, True]


def test_under_3_9_the_ahead_kernel_splits_both_loops():
    """3.9's ptxas fits a capped partition in 108% of its tensor bytes (the register-cap
    probe), so the ahead loop's consumer needs the 240 a 12-warp split gives it: both loops
    specialize, and no unspecialized loop is left to spill under the kernel's cap."""
    for strategy in ("heuristic", "optimal"):
        module = ir.parse((TTGIR_39 / CAUSAL_AHEAD).read_text())
        reports = partition_module(module, strategy, options=OPTIONS, triton="3.9.0")
        assert [r.specialized for r in reports] == [True, True], [r.reason for r in reports]
        assert [p.registers for p in reports[0].plan.partitions] == [240, 24]

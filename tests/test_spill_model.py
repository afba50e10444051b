"""The unspecialized kernel's must-spill prediction (model/resources.unspecialized_spills) and
its cost, against what ptxas does on the config space's CI slice and the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.model.cost import evaluate
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.resources import accumulator_registers, unspecialized_spills
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan

ROOT = Path(__file__).resolve().parent.parent
SLICE = ROOT / "corpus" / "configspace" / "ttgir-3.6"


def tables(path: Path):
    module = ir.parse(path.read_text())
    target = target_for("sm_90", "3.6.0")
    for loop in ws_loops(module):
        graph = build_graph(module, loop)
        yield graph, target, cost_table(graph, target)


@pytest.mark.parametrize(
    "name, spills",
    [
        # ptxas (Triton 3.6, the drop-in's unspecialized kernel): 624 B spilled, wgmmas serialized
        ("gemm_tma.t128x256x64_w4_s3", True),
        ("gemm_fp8.t128x256x128_w4_s3", True),
        # the accumulator carried by the nested K loop of a persistent GEMM: 1,692 B spilled
        ("gemm_persistent.t128x256x64_relu_w4_s3", True),
        # ptxas: no spill
        ("gemm_tma.t64x128x64_w4_s4", False),
        ("gemm_tma.t128x128x64_w8_s2", False),
        ("gemm_persistent.t128x256x64_gelu_w8_s2", False),
        ("attention_fwd.d128_m128n128_w8_s3_ahead", False),
    ],
)
def test_must_spill_as_ptxas_says(name, spills):
    [(graph, target, table)] = list(tables(SLICE / f"{name}.sm90.ttgir"))
    assert unspecialized_spills(table) is spills
    single = evaluate(single_partition_plan(graph, target), graph, target)
    assert (table.single_spill_cycles > 0) is spills
    assert ("stall" in single.bound_by) or not spills


def test_accumulator_of_a_4_warp_128x256_gemm_alone_exceeds_255():
    [(_, _, table)] = list(tables(SLICE / "gemm_tma.t128x256x64_w4_s3.sm90.ttgir"))
    assert accumulator_registers(table) == 24 + 256  # base + 128x256 fp32 over 128 threads


@pytest.mark.parametrize("folder", ["ttgir", "ttgir-3.9"])
def test_no_corpus_loop_must_spill(folder):
    """The hand-picked corpus's decisions stand: none of its loops is predicted to spill."""
    for path in sorted((ROOT / "corpus" / folder).glob("*.sm90.ttgir")):
        for _, _, table in tables(path):
            assert not unspecialized_spills(table), path.name

"""A loop that computes a wgmma one iteration ahead with a short step is not specialized
(model/decision.py, SHORT_AHEAD_TENSOR_CYCLES): attention d64 m128n64 `ahead` ran 7-15%
slower specialized in 12 of 12 measurements, both Triton versions.

tests/data/attention_fwd.d64_m128n64_w8_s3_ahead.sm90.ttgir is that config space entry as
`python -m corpus.configspace dump --family attention_fwd --target sm90` writes it under
Triton 3.6."""

from __future__ import annotations

from math import inf
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.options import SolveOptions
from ws_solver.model.cost_table import cost_table
from ws_solver.model.decision import NO_FLOOR, SHORT_AHEAD_TENSOR_CYCLES, specialize_floor
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.mma_stalls import computed_ahead
from ws_solver.model.target import target_for
from ws_solver.pipeline.partition import partition_text

ROOT = Path(__file__).resolve().parent.parent
SHORT = ROOT / "tests" / "data" / "attention_fwd.d64_m128n64_w8_s3_ahead.sm90.ttgir"
CORPUS = ROOT / "corpus" / "ttgir"
VERSIONS = ("3.6.0", "3.9.0")


def graphs(path: Path):
    module = ir.parse(path.read_text())
    return [build_graph(module, loop) for loop in ws_loops(module)]


@pytest.mark.parametrize(
    "path, ahead",
    [
        (SHORT, 1),
        (CORPUS / "attention_fwd.d128_m128n128_w8_s3_ahead.sm90.ttgir", 1),
        (CORPUS / "attention_fwd.d128_m128n128_w8_s2.sm90.ttgir", 0),  # S read in its iteration
        (CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir", 0),  # an accumulator chain
    ],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_computed_ahead_is_the_score_wgmma_of_an_ahead_loop(path: Path, ahead: int) -> None:
    (graph,) = graphs(path)[:1]
    table = cost_table(graph, target_for("sm_90", "3.6.0"))
    found = computed_ahead(graph, table.wgmmas)
    assert len(found) == ahead


@pytest.mark.parametrize("version", VERSIONS)
def test_only_the_short_ahead_step_has_no_floor_to_clear(version: str) -> None:
    target = target_for("sm_90", version)
    (short,) = graphs(SHORT)
    floor = specialize_floor(short, target)
    assert floor.gain == inf and f"{SHORT_AHEAD_TENSOR_CYCLES} tensor cycles" in floor.loop
    (long,) = graphs(CORPUS / "attention_fwd.d128_m128n128_w8_s3_ahead.sm90.ttgir")
    assert specialize_floor(long, target) == NO_FLOOR  # 2048 tensor cycles: ran 5-19% faster


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("strategy", ["heuristic", "optimal"])
def test_short_ahead_loop_stays_unspecialized_unless_forced(strategy: str, version: str) -> None:
    text = SHORT.read_text()
    options = SolveOptions(time_limit=5, cache=False, wall_clock=False)
    _, (report,) = partition_text(text, strategy, options=options, triton=version)
    assert not report.specialized
    assert "computes a wgmma ahead" in report.reason
    forced = SolveOptions(time_limit=5, cache=False, wall_clock=False, force=True)
    _, (report,) = partition_text(text, "heuristic", options=forced, triton=version)
    assert report.specialized  # the bench's `forced` still measures the split

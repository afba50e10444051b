"""The CP-SAT model's structure for large loops: linear symmetry breaking, nodes that must
share a partition collapsed onto one set of literals, and the subsolvers per target. None of
them may change the optimum."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.encode import EncodeOptions, encode, solve
from ws_solver.encode.constraints import shared_groups
from ws_solver.encode.solve import subsolvers_for
from ws_solver.model.cost import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.target import SM90, SM100, target_for

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
LOOPS = [
    "attention_fwd.d64_m128n64_w4_s3.sm90.ttgir",
    "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir",
    "gemm_persistent.t128x256x64_relu_w8_s3.sm90.ttgir",
    "gemm_tma.t128x128x64_w4_s4.sm100.ttgir",
]


@cache
def graph(name: str) -> LoopGraph:
    return build_graphs(ir.parse((TTGIR / name).read_text()))[0]


def _objective(name: str, options: EncodeOptions) -> tuple[str, int | None]:
    g = graph(name)
    result = solve(g, target_for(g.target), time_limit=20.0, workers=1, options=options)
    return result.status, result.objective


@pytest.mark.parametrize("name", LOOPS)
def test_neither_symmetry_breaking_nor_collapsing_changes_the_optimum(name: str) -> None:
    plain = _objective(name, EncodeOptions(symmetry_breaking=False, collapse=False))
    assert plain[0] == "OPTIMAL"
    assert _objective(name, EncodeOptions()) == plain


def test_symmetry_breaking_grows_linearly_with_the_loop() -> None:
    """At most three clauses of three literals and one implication per node and partition
    (ordering every node against all the earlier ones would be quadratic)."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    enc = encode(g, SM100)
    literals = 0
    for c in enc.groups["symmetry"]:
        proto = c.proto
        literals += len(proto.bool_or.literals) + len(proto.bool_and.literals)
        literals += len(proto.enforcement_literal)
    assert 0 < literals <= 8 * len(enc.table.assignable) * enc.partitions


def test_nodes_that_share_a_partition_share_their_literals() -> None:
    """On sm_90 the wgmmas and the register tensors they make or take stay in one partition
    (lowering rules R2 and R9): one set of literals serves them all."""
    g = graph("attention_fwd.d64_m128n64_w4_s3.sm90.ttgir")
    table = cost_table(g, SM90)
    lead = shared_groups(table)
    wgmmas = table.lowering.same_partition
    assert len(wgmmas) == 2 and len({lead.get(n, n) for n in wgmmas}) == 1
    enc = encode(g, SM90)
    for n, head in lead.items():
        assert head < n and head not in lead
        assert all(enc.x[n, p] is enc.x[head, p] for p in range(enc.partitions))
    alone = encode(g, SM90, EncodeOptions(collapse=False))
    assert len(enc.model.proto.variables) < len(alone.model.proto.variables)
    # Duplicable nodes keep their own literals: they may run in several partitions.
    assert not set(lead) & table.duplicable


def test_the_lp_runs_where_accumulators_live_in_registers() -> None:
    assert "max_lp" in subsolvers_for(SM90)
    assert "max_lp" not in subsolvers_for(SM100)
    assert "max_lp" in subsolvers_for(dataclasses.replace(SM100, mma_accumulator_in_registers=True))

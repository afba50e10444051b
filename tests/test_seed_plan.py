"""Triton's own partition scheduler (the seed, Triton 3.7+) read back as a plan, and plan
agreement up to relabelling.

The files in tests/data/seed are the IR right after Triton 3.9.0's
`tritongpu-partition-scheduling` pass ran on the corpus/ttgir-3.9 file of the same name
(`seed_plan.scheduled_text`); the attention one has two ops the scheduler cloned. (Triton
3.6 cannot parse them: they are kept out of tests/data's own *.ttgir.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ws_solver.heuristic import decide
from ws_solver.ir import Op, parse
from ws_solver.model import build_graphs
from ws_solver.model.plan import Partition, Plan
from ws_solver.model.target import target_for
from ws_solver.pipeline.agreement import agreement, side_by_side
from ws_solver.report import compare as cmp
from ws_solver.research.seed_plan import (
    SCHEDULER,
    SeedError,
    SeedUnavailable,
    after_scheduler,
    align,
    check_version,
    seed_loops,
    seed_plan,
)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "seed"
CORPUS = REPO / "corpus" / "ttgir-3.9"
GEMM = "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
ATTENTION = "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir"


def _seed(name: str):
    """(graph, seed plan, seed loop, heuristic's built plan) of the file's first loop."""
    original = parse((CORPUS / name).read_text())
    scheduled = parse((DATA / name).read_text())
    graph = build_graphs(original)[0]
    target = target_for(graph.target)
    loop = seed_loops(original, scheduled)[0]
    built, _ = decide(graph, target, force=True)
    return graph, seed_plan(graph, target, loop), loop, built


# -- version -----------------------------------------------------------------------------


def test_triton_36_is_refused_with_the_reason():
    with pytest.raises(SeedUnavailable, match="3.6.0's partition scheduler is an older"):
        check_version("3.6.0")


@pytest.mark.parametrize("version", ["3.7.0", "3.9.0", "3.9.0+git1234", "4.0.0"])
def test_seed_versions_pass(version):
    check_version(version)


# -- the dump -------------------------------------------------------------------------------


def test_the_dump_after_the_scheduler_is_taken():
    mark = "// -----// IR Dump Before "
    dump = (
        f"{mark}TritonGPUNormalizeWSWhileLoops: x //----- //\nmodule {{\n}}\n"
        f"{mark}{SCHEDULER}: tritongpu-partition-scheduling //----- //\nmodule {{ before }}\n"
        f"{mark}VerifyWarpSpecializationPartitions: y //----- //\nmodule {{\n}} loc(#loc)\n"
        "#loc1 = loc(unknown)\nerror: a later pass failed\n"
    )
    assert after_scheduler(dump) == "module {\n} loc(#loc)\n#loc1 = loc(unknown)\n"


def test_no_scheduler_dump_is_an_error():
    with pytest.raises(SeedError, match="no IR dump after TritonGPUPartitionScheduling"):
        after_scheduler("error: something failed\n", 1)


# -- reading the scheduled loop -------------------------------------------------------------


def test_scheduled_gemm_reads_into_a_plan_the_heuristic_agrees_with():
    graph, seed, loop, built = _seed(GEMM)
    # Triton never gives the MMA or load partition id 0: with nothing else, 0 is empty.
    assert loop.annotation.loop_partitions == (1, 2)
    assert loop.annotation.stages == (0, 1, 0)
    assert loop.clones == 0
    by_op = {graph.nodes[n].op_name: seed.assignment[n] for n in range(len(graph.nodes))}
    assert by_op["tt.descriptor_load"] != by_op["ttng.tc_gen5_mma"]
    assert len(seed.partitions) == 2  # compacted: the empty partition 0 is dropped
    found = agreement(built, seed)
    assert found.agree and found.partitions == (2, 2)


def test_cloned_ops_map_to_their_original_and_the_difference_is_named():
    graph, seed, loop, built = _seed(ATTENTION)
    assert loop.clones == 2
    assert len(loop.annotation.op_partitions) == len(list(parse_loop_ops(ATTENTION)))
    found = agreement(built, seed)
    assert not found.agree and found.partitions == (4, 4)
    labels = {graph.nodes[n].label for n in found.differing}
    assert labels == {"%alpha", "%alpha_31"}  # the seed runs alpha in softmax and correction
    record = side_by_side(graph, target_for(graph.target), built, seed)
    assert {d["label"] for d in record["differing"]} == labels
    assert all(len(d["b"]) == 2 and len(d["a"]) == 1 for d in record["differing"])


def parse_loop_ops(name: str):
    from ws_solver.model.dfg import ws_loops

    module = parse((CORPUS / name).read_text())
    return list(ws_loops(module)[0].op.walk())[1:]


def test_align_groups_clones_and_refuses_unknown_ops():
    a, b = Op("ttg.memdesc_trans", line=3), Op("ttng.tc_gen5_mma", line=4)
    x, y, z = Op("ttg.memdesc_trans"), Op("ttg.memdesc_trans"), Op("ttng.tc_gen5_mma")
    ka, kb = ("ttg.memdesc_trans", (), "f.py:1:1"), ("ttng.tc_gen5_mma", (), "f.py:2:1")
    groups = align([(ka, a), (kb, b)], [(ka, x), (ka, y), (kb, z)], 1)
    assert [[id(o) for o in g] for g in groups] == [[id(x), id(y)], [id(z)]]
    with pytest.raises(SeedError, match="op 1 \\('ttng.tc_gen5_mma' at line 4\\)"):
        align([(ka, a), (kb, b)], [(ka, x), (ka, y)], 1)
    with pytest.raises(SeedError, match="1 ops more than the input"):
        align([(ka, a)], [(ka, x), (kb, z)], 1)


# -- agreement ------------------------------------------------------------------------------


def _plan(assignment) -> Plan:
    ids = sorted({p for parts in assignment for p in parts})
    parts = tuple(Partition(p, 4, 64, 0) for p in range(max(ids) + 1))
    return Plan("k#loop0", "sm_100", tuple(map(tuple, assignment)), parts, ())


def test_relabelled_plans_agree():
    a = _plan([(0,), (0,), (1,), (1, 0)])
    b = _plan([(2,), (2,), (1,), (1, 2)])  # ids 0 -> 2, 1 -> 1; partition 0 empty
    found = agreement(a, b)
    assert found.agree and found.mapping == {0: 2, 1: 1} and found.differing == ()


def test_different_plans_name_the_nodes_that_differ():
    a = _plan([(0,), (0,), (1,), (1,)])
    b = _plan([(0,), (1,), (1,), (1,)])
    found = agreement(a, b)
    assert not found.agree and found.differing == (1,)
    merged = agreement(a, _plan([(0,), (0,), (0,), (0,)]))
    assert merged.partitions == (2, 1) and not merged.agree and merged.differing == (2, 3)


# -- compare --triton-plan ------------------------------------------------------------------


def _installed_seed() -> bool:
    try:
        import triton
    except ImportError:
        return False
    try:
        check_version(triton.__version__)
    except SeedUnavailable:
        return False
    return True


@pytest.mark.skipif(_installed_seed(), reason="the seed column needs a Triton before 3.7")
def test_compare_triton_plan_without_the_seed_says_so_and_changes_nothing(ws_solver, tmp_path):
    path = CORPUS / GEMM
    plain, flagged = tmp_path / "plain.json", tmp_path / "flagged.json"
    first = ws_solver("compare", path, "--time-limit", "0.5", "-q", "--json", plain)
    second = ws_solver(
        "compare", path, "--time-limit", "0.5", "-q", "--json", flagged, "--triton-plan"
    )
    assert first.returncode == second.returncode == 0
    lines = [line for line in second.stderr.splitlines() if "--triton-plan" in line]
    assert len(lines) == 1 and "no seed column" in lines[0]
    a, b = json.loads(plain.read_text()), json.loads(flagged.read_text())
    a.pop("timing"), b.pop("timing")
    assert a == b and "seed" not in b


@pytest.mark.skipif(not _installed_seed(), reason="needs Triton 3.7+ (the seed's scheduler)")
def test_compare_triton_plan_adds_the_seed_column(ws_solver, tmp_path):
    out = tmp_path / "c.json"
    # The agreement measured in docs/seed-vs-heuristic.md: the heuristic under 3.6's rules
    # (3.9's forbid its MMA in partition 0 on sm_100, so its forced plan declines).
    result = ws_solver(
        "compare", CORPUS / GEMM, "--time-limit", "0.5", "-q", "--json", out, "--triton-plan",
        "--triton-version", "3.6.0",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["seed"]["agree"] == document["seed"]["loops"] == 1
    assert document["loops"][0]["seed"]["agree"]
    assert "II seed" in cmp.to_text(document)


def test_the_seed_column_renders_only_when_present():
    record = {"seed": {"agree": False, "differing": [{}, {}], "seed": {"ii": 10}}}
    assert cmp._seed_cells(record) == ("10", "2 differ")
    assert cmp.table_columns({}) == cmp.TABLE_COLUMNS
    assert cmp.table_columns({"seed": {}})[-2:] == cmp.SEED_COLUMNS

"""The sm_90 stage-release fix: checker fails on Triton's output, passes after the rewrite,
and the rewritten module verifies in Triton and compiles to cubin (CPU only)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

import corpus
from ws_solver import ir
from ws_solver.triton.rewrites.hopper import (
    check_releases,
    fix_async_wgmma_release,
    fix_async_wgmma_release_report,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
TTGIR = corpus.ttgir_dir()

GEMMS = [
    "gemm_tma.t128x128x64_w4_s4",
    "gemm_tma.t128x256x64_w8_s3",
    "gemm_persistent.t128x128x64_gelu_w4_s3",
    "gemm_fp8.t128x128x128_w4_s4",
    "gemm_cond_reset.t128x128x64_g128_w4_s4",
]
ATTENTION = [
    "attention_fwd.d64_m128n64_w4_s3",
    "attention_fwd.d128_m128n128_w8_s2",
    "attention_fwd.causal_d128_m128n128_w8_s2",
]
CASES = GEMMS + ATTENTION


def _index() -> dict[str, dict]:
    entries = json.loads((TTGIR / "index.json").read_text())
    return {e["file"]: e for e in entries}


def _manual_annotation(text: str) -> str:
    """Loads and their local_alloc in partition 1 (one warp), everything else in 0."""
    from ws_solver.ir.annotate import annotate_loop
    from ws_solver.model.annotation import loop_annotation
    from ws_solver.model.channels import derive_channels
    from ws_solver.model.cost_table import cost_table
    from ws_solver.model.dfg import build_graphs, ws_loops
    from ws_solver.model.kinds import NodeKind
    from ws_solver.model.plan import Partition, Plan, complete_assignment
    from ws_solver.model.target import target_for

    module = ir.parse(text)
    for loop, graph in zip(ws_loops(module), build_graphs(module), strict=True):
        target = target_for(graph.target)
        table = cost_table(graph, target)
        decided = {}
        for n in table.assignable:
            node = graph.nodes[n]
            load = node.kind == NodeKind.LOAD or node.op_name == "ttg.local_alloc"
            decided[n] = (1,) if load else (0,)
        assignment = complete_assignment(graph, decided)
        parts = (Partition(0, graph.num_warps, 232, 0, "mma"), Partition(1, 1, 24, 0, "load"))
        channels = derive_channels(graph, assignment, table)
        plan = Plan(graph.name, target.name, assignment, parts, channels)
        annotate_loop(loop.op, loop_annotation(graph, plan, loop.index))
    return module.print()


@pytest.mark.triton
@cache
def _lowered(case: str) -> tuple[str, str]:
    """(Triton's text after warp_specialize + pipeline + optimize_partition_warps, annotated
    input) for a corpus file with the manual plan."""
    from triton._C.libtriton import ir as tir
    from triton._C.libtriton import passes

    from tests.triton_util import context
    from ws_solver.triton.toolchain.make_ttgir import parse_module_text

    entry = _index()[f"{case}.sm90.ttgir"]
    annotated = _manual_annotation((TTGIR / f"{case}.sm90.ttgir").read_text())
    mod = parse_module_text(annotated, context(90))
    pm = tir.pass_manager(mod.context)
    pm.enable_debug()
    passes.ttgpuir.add_warp_specialize(pm, entry["num_stages"])
    passes.ttgpuir.add_pipeline(pm, entry["num_stages"], False)
    passes.ttgpuir.add_optimize_partition_warps(pm)
    pm.run(mod, "test_hopper_fix")
    return mod.str(), annotated


@pytest.mark.parametrize("case", CASES)
def test_checker_flags_triton_output_and_passes_the_fix(case):
    lowered, _ = _lowered(case)
    assert "ttg.warp_specialize" in lowered
    assert check_releases(lowered), "the checker must see the race in Triton's own output"
    fixed, report = fix_async_wgmma_release_report(lowered)
    assert check_releases(fixed) == []
    assert report.deferred > 0 and report.synchronous == 0, report
    # the wgmma stays asynchronous: no wait in the loop was made synchronous
    assert _loop_pendings(lowered) == _loop_pendings(fixed)
    assert fix_async_wgmma_release(fixed) == fixed  # idempotent


@pytest.mark.parametrize("case", CASES)
def test_fixed_text_verifies_in_triton(case):
    from tests.triton_util import parse_with_triton

    lowered, _ = _lowered(case)
    parse_with_triton(fix_async_wgmma_release(lowered), 90)


@pytest.mark.triton
@pytest.mark.parametrize("case", [GEMMS[1], GEMMS[2], ATTENTION[1], ATTENTION[2]])
def test_rest_of_pipeline_compiles_to_cubin(case):
    import inspect

    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend

    from tests.triton_util import context
    from ws_solver.triton.toolchain.make_ttgir import parse_module_text, run_after_partition

    if "post_pipeline" not in inspect.signature(run_after_partition).parameters:
        pytest.skip("run_after_partition has no post_pipeline hook")
    entry = _index()[f"{case}.sm90.ttgir"]
    _, annotated = _lowered(case)
    backend = CUDABackend(GPUTarget("cuda", 90, 32))
    opts = backend.parse_options(
        {"num_warps": entry["num_warps"], "num_stages": entry["num_stages"]}
    )
    seen = []

    def rewrite(text: str) -> str:
        out = fix_async_wgmma_release(text)
        seen.append(out)
        return out

    mod = parse_module_text(annotated, context(90))
    metadata: dict = {}
    mod = run_after_partition(mod, opts, 90, metadata, post_pipeline=rewrite)
    assert seen and check_releases(seen[0]) == []
    llir = backend.make_llir(mod, metadata, opts, 90)
    ptx = backend.make_ptx(llir, metadata, opts, 90)
    assert "wgmma.wait_group.sync.aligned" in ptx
    cubin = backend.make_cubin(ptx, metadata, opts, 90)
    assert isinstance(cubin, bytes) and len(cubin) > 1000


def test_synchronous_fallback_is_also_clean():
    """The fallback (pendings = 0 / an inserted wait) passes the checker on both shapes."""
    from tests.triton_util import parse_with_triton

    for case in (GEMMS[0], ATTENTION[0]):
        lowered, _ = _lowered(case)
        out, report = fix_async_wgmma_release_report(lowered, synchronous=True)
        assert report.synchronous > 0 and report.deferred == 0
        assert check_releases(out) == []
        if case in GEMMS:
            assert "{pendings = 1 : i32}" not in _default_region(out)
        else:
            assert "%ws_retired_0 = ttng.warp_group_dot_wait" in out
        parse_with_triton(out, 90)


def test_predicated_release_falls_back_to_synchronous():
    from ws_solver.triton.rewrites.hopper import _loops, _racy_releases

    lowered, _ = _lowered(GEMMS[0])
    module = ir.parse(lowered)
    loop = next(lp for lp in _loops(module) if _racy_releases(lp))
    # give one racy arrive a predicate: last iteration's predicate is not known any more
    arrive = _racy_releases(loop)[0].arrive
    module.insert_before(loop, "%test_pred = arith.constant true")
    text = module.op_text(arrive)
    module.insert_before(arrive, re.sub(r"(arrive_barrier %\w+, 1)", r"\1, %test_pred", text))
    module.erase(arrive)
    fixed, report = fix_async_wgmma_release_report(module.print())
    assert check_releases(fixed) == []
    assert report.synchronous == 1 and report.deferred == 1
    assert any("predicated" in note for note in report.notes)


def test_no_wgmma_no_change():
    text = (TTGIR / "row_reduce.r4_n1024_w4_s3.sm90.ttgir").read_text()
    assert fix_async_wgmma_release(text) == text
    assert check_releases(text) == []


def _default_region(text: str) -> str:
    start = text.index("default {")
    return text[start : text.index("partition0(", start)]


def _loop_pendings(text: str) -> list[int]:
    region = _default_region(text)
    return [int(p) for p in re.findall(r"pendings = (\d+) : i32", region)]

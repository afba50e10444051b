"""benchmarks/common/hopper_route.py: Triton 3.6's own sm_90 route (add_hopper_warpspec), driven by
async_task_id annotations (docs/hopper-route.md). CPU only: compiles to cubin for sm_90."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from benchmarks.common import hopper_route as hr
from benchmarks.common.hopper_route import HopperVariant
from ws_solver import ir
from ws_solver.triton.toolchain.versions import stages_hook

REPO_ROOT = Path(__file__).resolve().parent.parent

CORPUS = REPO_ROOT / "corpus" / "ttgir"


@pytest.mark.parametrize(
    "variant",
    [
        HopperVariant(),
        HopperVariant(consumers=2),
        HopperVariant(consumers=1, plan=True, buffers=2),
        HopperVariant(consumers=2, warps=4),
    ],
)
def test_names_round_trip(variant):
    assert hr.parse(variant.name) == variant


@pytest.mark.parametrize(
    "name", ["optimal", "hopper~c0", "hopper~plan", "hopper~w4~c2", "hopper~x1", "hopper~c"]
)
def test_other_names_are_not_variants(name):
    assert hr.parse(name) is None


def _task_ids(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for op in ir.parse(text).walk():
        if op.has_attr(hr.TASK_ID):
            out.setdefault(op.name, []).append(op.attributes[hr.TASK_ID].raw)
    return out


def test_anchors_follow_triton_rule_on_gemm():
    text = (CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir").read_text()
    ids = _task_ids(hr.annotate(text, consumers=2))
    assert ids == {
        "tt.descriptor_load": ["array<i32: 0>", "array<i32: 0>"],
        "ttng.warp_group_dot": ["array<i32: 1, 2>"],
        "tt.descriptor_store": ["array<i32: 1, 2>"],
    }


def test_loads_that_feed_no_wgmma_are_left_to_propagation():
    # attention_bwd loads tensors that only feed register math (delta, lse): no anchor.
    text = (CORPUS / "attention_bwd.d64_n128m64_w4_s2.sm90.ttgir").read_text()
    module = ir.parse(text)
    sides = hr.anchor_sides(module)
    loads = [op for op in module.walk() if op.name in hr.LOADS and hr._in_ws_loop(op)]
    assert loads and any(id(op) not in sides for op in loads)
    assert any(sides.get(id(op)) == "producer" for op in loads)


# -- compiles (Triton 3.6.0, sm_90, no GPU) --------------------------------------------------
triton = pytest.importorskip("triton")


def _compile(variant: HopperVariant, kernel: str, config: str) -> tuple[object, dict]:
    from triton import knobs
    from triton.backends.compiler import GPUTarget

    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source

    cfg = corpus_kernels.load(kernel).CONFIGS[config]
    sink: dict = {}

    def hook(backend, stages, options, language, capability):
        stages["ttgir"] = hr.make_stage(options, capability, variant, sink)

    with tempfile.TemporaryDirectory() as d, knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = d
        knobs.runtime.add_stages_inspection_hook = stages_hook(hook, f"test-{variant}")
        compiled = triton.compile(
            ast_source(kernel, cfg),
            target=GPUTarget("cuda", 90, 32),
            options=corpus_kernels.options(cfg),
        )
    return compiled, sink


def test_one_consumer_group_is_honoured_and_buffers_follow_the_pass_argument():
    compiled, sink = _compile(
        HopperVariant(consumers=1, buffers=2), "gemm_tma", "t128x128x64_w4_s4"
    )
    built = hr.summary(sink["after"])
    assert built["warp_specialize_ops"] == 1 and built["regions"] == 2
    assert built["buffer_depths"] == [2]  # the config's num_stages is 4
    regions = hr.region_ops(sink["after"])
    assert regions["default"].count("ttng.async_tma_copy_global_to_local") == 2
    assert regions["partition0"] == ["ttng.warp_group_dot", "tt.descriptor_store"]
    assert compiled.metadata.num_warps == 8  # 4 producer + 4 consumer warps
    assert isinstance(compiled.asm["cubin"], bytes)


@pytest.mark.triton36  # 3.9 fails the same split with another message
def test_two_consumer_groups_split_the_tile_and_a_tma_store_breaks_it():
    # The data partition halves the accumulator, but not the store's tensor descriptor.
    with pytest.raises(hr.RouteFailed, match="tensor descriptor block and tensor types"):
        _compile(HopperVariant(consumers=2), "gemm_tma", "t128x128x64_w4_s4")


def test_an_eight_warp_module_is_left_unspecialized_even_when_annotated():
    compiled, sink = _compile(HopperVariant(consumers=1), "gemm_tma", "t128x256x64_w8_s3")
    assert hr.summary(sink["after"])["warp_specialize_ops"] == 0
    assert re.search(r"async_task_id", sink["after"])  # our annotations, ignored
    assert compiled.metadata.num_warps == 8


# -- the GPU probe's bookkeeping (synthetic rows, no GPU) -------------------------------------
def _row(strategy: str, config: str = "c", ws: int = 1, passed: bool = True, ms=None) -> dict:
    row = {"job": f"k.{config}.{strategy}", "kernel": "k", "config": config, "strategy": strategy}
    row["compile"] = {}
    if strategy != "optimal":
        row["structure"] = {"warp_specialize_ops": ws}
    row["verify"] = {"passed": passed}
    if ms:
        row["bench"] = {"ms_rounds": list(ms)}
    return row


def test_probe_runs_only_specialized_route_rows_and_their_baselines():
    from benchmarks.gpu import hopper_route_probe as probe

    rows = [
        _row("optimal", "a"),
        _row("hopper", "a", ws=0),
        _row("hopper~c1", "a"),
        _row("optimal", "b"),
        _row("hopper", "b", ws=0),
    ]
    kept = probe.worth_running(rows, lambda r: True)
    assert [r["job"] for r in kept] == ["k.a.optimal", "k.a.hopper~c1"]
    rows[2]["verify"]["passed"] = False
    assert probe.worth_running(rows, probe.verified) == []


def test_probe_compares_against_the_baseline_with_the_spread():
    from benchmarks.gpu import hopper_route_probe as probe

    rows = [
        _row("optimal", ms=(1.0, 1.01, 0.99)),
        _row("hopper~c1", ms=(0.5, 0.5, 0.5)),
        _row("hopper~c2", ms=(1.0, 1.0, 1.001)),
    ]
    probe.compare(rows)
    assert rows[1]["versus_baseline"] == {"speedup": 2.0, "beyond_spread": True}
    assert rows[2]["versus_baseline"]["beyond_spread"] is False
    assert "versus_baseline" not in rows[0]
    table = probe.markdown({"rounds": 3}, rows)
    assert "| k.c | hopper~c1 |" in table and "2.000× *" in table

"""The kept module is lowered once (issue 49): the compile's ttgir, llir and ptx stages take
the decision check's TTGIR, LLVM IR and PTX from the guard's child, and the kernel Triton keeps
is byte for byte the one this process's own lowering makes. CPU only."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("triton")

from test_dropin import _compile, isolated  # noqa: E402, F401
from triton import knobs  # noqa: E402

import ws_solver.triton as wst  # noqa: E402
from ws_solver.triton.dropin import handover  # noqa: E402
from ws_solver.triton.guard import client as lguard  # noqa: E402
from ws_solver.triton.toolchain import versions  # noqa: E402

pytestmark = pytest.mark.triton

ASM = ("ttgir", "llir", "ptx", "cubin")
REUSED = "ptxas run once: the decision check's cubin of this PTX"


def _compiled(root, kernel: str, config: str, tag: str):
    """(the compiled kernel, its report) with `optimal`, fresh caches under ``root / tag``."""
    knobs.cache.dir = str(root / tag / "triton")
    wst.enable("optimal", cache_dir=root / tag / "c")
    try:
        compiled = _compile(kernel, 90, config)
        report = wst.last_compile_report()
    finally:
        wst.disable()
        lguard.guard().forget()
    return compiled, report


def _metadata(compiled) -> dict:
    """Triton's metadata of a compile without the drop-in's report (it times the compile)."""
    return {k: v for k, v in compiled.metadata._asdict().items() if k != "ws_solver"}


def _loop_facts(report) -> list[dict]:
    """The report's loop records without their times."""
    keys = ("loop", "strategy", "specialized", "partitions", "registers_applied")
    return [{k: loop.get(k) for k in keys} for loop in report.loops]


@pytest.mark.parametrize(
    ("kernel", "config", "used"),
    [
        ("gemm_tma_indesc", "t128x128x64_w4_s3", "optimal"),  # unspecialized, device descriptors
        ("gemm_fp8", "t128x256x128_w8_s3", "optimal"),  # specialized, per-warp-group release
    ],
)
def test_the_handed_lowering_makes_the_same_kernel(isolated, monkeypatch, kernel, config, used):  # noqa: F811
    """The same kernel with the handover and with this process lowering again: every stage's
    text, the cubin, Triton's metadata (its keys in the same order) and the report's facts of
    the post-pipeline stage are equal."""
    once, once_report = _compiled(isolated, kernel, config, "once")
    monkeypatch.setattr(handover, "taken", lambda *args: None)
    twice, twice_report = _compiled(isolated, kernel, config, "twice")
    assert once_report.strategy_used == used
    assert handover.LOWERED_ONCE in once_report.notes
    assert handover.LOWERED_ONCE not in twice_report.notes
    for stage in ASM:
        assert once.asm[stage] == twice.asm[stage], stage
    assert list(_metadata(once).items()) == list(_metadata(twice).items())
    for field in ("strategy_used", "lowered", "setmaxnreg"):
        assert getattr(once_report, field) == getattr(twice_report, field), field
    assert _loop_facts(once_report) == _loop_facts(twice_report)
    assert [n for n in once_report.notes if n != handover.LOWERED_ONCE] == twice_report.notes


def test_stock_kept_is_the_build_the_check_weighed(isolated, monkeypatch) -> None:  # noqa: F811
    """A 4-warp 128x256 GEMM whose plans spill: the decision check keeps stock's kernel, and
    the compile's stages take the build of it whose spills the check weighed. (Stock Triton
    3.6 lowers this kernel to one of two TTGIRs and cubins from run to run, in one process
    too, so a second lowering is no reference: each stage's text is the child's, the cubin
    is its ptxas run, and the metadata has the keys of a compile that lowers here.)"""
    handed: list = []
    lowered = lguard.LoweringGuard.lowered

    def spy(self, key):
        handed.append(lowered(self, key))
        return handed[-1]

    monkeypatch.setattr(lguard.LoweringGuard, "lowered", spy)
    once, report = _compiled(isolated, "gemm_tma_indesc", "t128x256x64_w4_s3", "once")
    assert report.strategy_used == "stock" and report.decision["rule"] == "spill check: stock"
    assert handover.LOWERED_ONCE in report.notes and REUSED in report.notes
    lowering = handed[-1]
    assert lowering.post is None  # stock's make_ttgir
    assert [once.asm[s] for s in ASM[:3]] == [lowering.ttgir, lowering.llir, lowering.ptx]
    metadata = _metadata(once)
    for stage in (lowering.ttgir_metadata, lowering.llir_metadata, lowering.ptx_metadata):
        assert stage and {k: metadata[k] for k in stage} == json.loads(json.dumps(stage))
    monkeypatch.setattr(handover, "taken", lambda *args: None)
    twice, _ = _compiled(isolated, "gemm_tma_indesc", "t128x256x64_w4_s3", "twice")
    assert list(_metadata(twice)) == list(metadata)


def test_a_knob_set_in_this_process_only_lowers_here(isolated) -> None:  # noqa: F811
    """A knob the child does not see (set here after the helper started: a knob sets its
    environment variable) changes the lowering: the compile lowers the module itself, and
    its PTX has no line information."""
    lguard.guard().shutdown()
    lguard.guard().start()
    with knobs.compilation.scope():
        knobs.compilation.disable_line_info = True
        compiled, report = _compiled(isolated, "gemm_tma_indesc", "t128x128x64_w4_s3", "k")
    assert handover.LOWERED_ONCE not in report.notes
    assert ".loc" not in compiled.asm["ptx"]


def test_a_hook_that_wraps_a_stage_gets_a_module(isolated, monkeypatch) -> None:  # noqa: F811
    """A hook installed after enable() that wraps the llir stage gets the module, as from
    Triton: the compile lowers it itself."""
    seen: list[type] = []

    def wrap(backend, stages, options, language, capability) -> None:
        ours(backend, stages, options, language, capability)
        llir = stages["llir"]
        stages["llir"] = lambda src, metadata: (seen.append(type(src)), llir(src, metadata))[1]

    knobs.cache.dir = str(isolated / "triton")
    wst.enable("optimal", cache_dir=isolated / "c")
    ours = knobs.runtime.add_stages_inspection_hook
    knobs.runtime.add_stages_inspection_hook = versions.stages_hook(wrap, "wrapped")
    try:
        _compile("gemm_tma_indesc", 90, "t128x128x64_w4_s3")
        report = wst.last_compile_report()
    finally:
        knobs.runtime.add_stages_inspection_hook = ours
        wst.disable()
        lguard.guard().forget()
    assert seen and seen[0] is not str
    assert handover.LOWERED_ONCE not in report.notes


def test_taken_only_from_a_build_that_printed_nothing() -> None:
    lowering = lguard.Lowering("t", "l", "p", {}, {}, {}, None, environment="elsewhere")
    ok = lguard.Verdict("ok")
    assert handover.taken(lowering, lguard.Verdict("ok", stderr="warning: x"), True) is None
    assert handover.taken(lowering, lguard.Verdict("error"), True) is None
    assert handover.taken(lowering, ok, False) is None
    assert handover.taken(None, ok, True) is None
    assert handover.taken(lowering, ok, True) is None  # another process's environment

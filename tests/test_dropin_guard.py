"""The lowering guard (ws_solver.triton.guard): hangs, crashes and failures of Triton's lowering
are caught in a child process, and the drop-in falls back instead of hanging or dying.

The hang and the crash are stand-ins (tests/guard_stubs.py, run in the child); the failure is
real (Triton's own partitioner on the row reduction). CPU only.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("triton")

from test_dropin import REPO_ROOT, _compile, _stub_solver, isolated  # noqa: F401
from triton.backends.nvidia.compiler import CUDAOptions

import corpus
import ws_solver.triton as wst
from ws_solver.triton.dropin import kernel_compile
from ws_solver.triton.dropin import switch as dropin
from ws_solver.triton.guard import client as lguard

pytestmark = pytest.mark.triton

TESTS = Path(__file__).resolve().parent

CORPUS = corpus.ttgir_dir()


def _job(name: str, cap: int, num_warps: int = 4, num_stages: int = 4) -> lguard.LoweringJob:
    """Triton's own route ("triton" strategy) on a corpus file: the text as dumped."""
    return lguard.LoweringJob(
        text=(CORPUS / name).read_text(),
        capability=cap,
        options=CUDAOptions(num_warps=num_warps, num_stages=num_stages),
        num_warps=num_warps,
        registers=(),
        apply_registers=True,
        hopper=cap == 90,
    )


GEMM = "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"


@pytest.fixture
def fresh_guard():
    """A guard of its own (its own helper process), shut down afterwards."""
    guard = lguard.LoweringGuard()
    try:
        yield guard
    finally:
        guard.shutdown()


def test_probe_ok_is_cached_in_memory_and_on_disk(fresh_guard, tmp_path) -> None:
    job = _job(GEMM, 100)
    first = fresh_guard.probe(job, 60, cache_dir=tmp_path)
    assert first.ok and not first.cached and first.stage == "llir", first
    again = fresh_guard.probe(job, 60, cache_dir=tmp_path)
    assert again.ok and again.cached
    assert len(list(tmp_path.glob("*.json"))) == 1
    other = lguard.LoweringGuard()  # another process, in effect: only the file is shared
    assert other.probe(job, 60, cache_dir=tmp_path).cached
    assert other._server is None  # answered without starting a helper
    # A different module (or target, or options) is probed again.
    changed = fresh_guard.probe(_job(GEMM, 100, num_stages=3), 60, cache_dir=tmp_path)
    assert changed.ok and not changed.cached


def test_probe_hang_is_killed_and_names_the_pass(fresh_guard) -> None:
    start = time.monotonic()
    verdict = fresh_guard.probe(_job(GEMM, 100), 1.0, function="guard_stubs:hang_in_pipeline")
    assert time.monotonic() - start < 30
    assert verdict.status == "hang" and verdict.stage == "pipeline"
    assert verdict.reason == "Triton's pipeline did not finish in 1 s"
    # The helper survives the hung child and keeps answering.
    assert fresh_guard.probe(_job(GEMM, 100), 60).ok


def test_probe_crash_is_reported(fresh_guard) -> None:
    verdict = fresh_guard.probe(
        _job(GEMM, 100), 30, function="guard_stubs:abort_in_warp_specialize"
    )
    assert verdict.status == "crash" and verdict.stage == "warp_specialize"
    assert verdict.reason == "Triton's warp_specialize crashed the process (SIGABRT)"
    assert fresh_guard.probe(_job(GEMM, 100), 60).ok


@pytest.mark.triton36
def test_probe_failure_carries_the_mlir_error(fresh_guard) -> None:
    # Triton's own partitioner on a loop with no load feeding an MMA (see triton-3.6-facts.md).
    verdict = fresh_guard.probe(_job("row_reduce.r2_n2048_w8_s2.sm100.ttgir", 100, 8, 2), 60)
    assert verdict.status == "error" and verdict.stage == "warp_specialize"
    assert verdict.reason.startswith("RuntimeError: PassManager::run failed")
    assert "NVWSInsertAref" in verdict.reason


def test_a_kernel_that_needs_more_tensor_memory_than_the_sm_has_is_a_failure(fresh_guard) -> None:
    # Triton's own split of attention_bwd d128 on sm_100 needs 576 TMEM columns; both releases
    # compile it without an error into a kernel that traps at launch (3.9: a lone trap;
    # benchmarks/results/2026-12-02-tmem-handoffs).
    name = "attention_bwd.d128_n128m64_w8_s2.sm100.ttgir"
    verdict = fresh_guard.probe(_job(name, 100, num_warps=8, num_stages=2), 120)
    assert verdict.status == "error" and verdict.stage == "llir", verdict
    assert "576 columns of tensor memory, more than the SM's 512" in verdict.reason


def test_unusable_helper_means_unguarded(fresh_guard, monkeypatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    verdict = fresh_guard.probe(_job(GEMM, 100), 60)
    assert verdict.status == "unavailable" and not verdict.usable
    assert "guard unavailable" in verdict.reason


def test_helper_dies_with_its_parent(fresh_guard) -> None:
    assert fresh_guard.probe(_job(GEMM, 100), 60).ok
    server = fresh_guard._server
    assert server is not None
    server.proc.stdin.close()  # what the parent's exit does
    assert server.proc.wait(timeout=30) == 0
    fresh_guard.forget()
    assert fresh_guard.probe(_job(GEMM, 100), 60).ok  # a new helper


# -- through the drop-in ----------------------------------------------------------------------
@pytest.fixture
def guarded(isolated, monkeypatch):  # noqa: F811 (the fixture of test_dropin)
    lguard.guard().forget()
    yield isolated
    lguard.guard().forget()


def test_hanging_lowering_falls_back(guarded, monkeypatch) -> None:
    _stub_solver(monkeypatch)
    monkeypatch.setattr(lguard, "PROBE_FUNCTION", "guard_stubs:hang_if_annotated")
    monkeypatch.setattr(kernel_compile, "BINARY_PROBE", "guard_stubs:hang_if_annotated")
    # The fallback chain (the decision check would keep stock's kernel at once: below).
    wst.enable("heuristic", lowering_timeout=5, check_decision=False)
    with pytest.warns(wst.WSFallbackWarning, match="did not finish in 5 s") as caught:
        compiled = _compile("gemm_tma", 100)
    message = str(next(w for w in caught if w.category is wst.WSFallbackWarning).message)
    assert "heuristic failed on loop 0" in message and "Triton's pipeline" in message
    report = wst.last_compile_report()
    assert report.strategy_used == "triton" and compiled.asm["cubin"]
    assert [(p["strategy"], p["status"]) for p in report.probes] == [
        ("heuristic", "hang"),
        ("triton", "ok"),
    ]
    assert report.fallbacks[0]["reason"] == "Triton's pipeline did not finish in 5 s"


def test_a_hanging_plan_keeps_stocks_kernel_under_the_decision_check(guarded, monkeypatch):
    _stub_solver(monkeypatch)
    monkeypatch.setattr(lguard, "PROBE_FUNCTION", "guard_stubs:hang_if_annotated")
    monkeypatch.setattr(kernel_compile, "BINARY_PROBE", "guard_stubs:hang_if_annotated")
    wst.enable("heuristic", lowering_timeout=5)
    compiled = _compile("gemm_tma", 100)
    report = wst.last_compile_report()
    assert report.strategy_used == "stock" and compiled.asm["cubin"] and not report.fallbacks
    assert report.decision["rule"] == "stock: ours not built"
    assert "did not finish in 5 s" in report.decision["evidence"]


@pytest.mark.parametrize("capability, used", [(90, "none"), (100, "stock")])
def test_crashing_lowering_falls_back(guarded, monkeypatch, capability, used) -> None:
    """Every lowering the guard's child runs crashes: Triton's partition gives way to the
    unspecialized kernel, and on sm_100 (where that is probed too, for its tensor memory)
    to stock's kernel."""
    monkeypatch.setattr(lguard, "PROBE_FUNCTION", "guard_stubs:abort_in_warp_specialize")
    monkeypatch.setattr(kernel_compile, "BINARY_PROBE", "guard_stubs:abort_in_warp_specialize")
    wst.enable("triton", lowering_timeout=30)
    with pytest.warns(wst.WSFallbackWarning, match="SIGABRT"):
        compiled = _compile("gemm_tma", capability)
    report = wst.last_compile_report()
    assert report.strategy_used == used and compiled.asm["cubin"]
    if used == "none":
        assert "ttg.warp_specialize" not in compiled.asm["ttgir"]


def test_guarded_compile_matches_unguarded(guarded, monkeypatch) -> None:
    _stub_solver(monkeypatch)
    binaries = {}
    for timeout in (60, None):
        wst.enable("heuristic", lowering_timeout=timeout, cache_dir=guarded / f"t{timeout}")
        compiled = _compile("gemm_tma", 90)
        report = wst.last_compile_report()
        assert report.strategy_used == "heuristic" and not report.fallbacks
        binaries[timeout] = compiled.asm["cubin"]
        assert len(report.probes) == (1 if timeout else 0)
        wst.disable()
    assert binaries[60] == binaries[None]


def test_verdicts_are_reused_across_compiles(guarded, monkeypatch) -> None:
    _stub_solver(monkeypatch)
    probes = []
    for round_ in range(2):
        wst.enable("heuristic", cache_dir=guarded / "triton")
        dropin.reset_jit_caches()
        # A fresh Triton cache each round, so that the ttgir stage runs again.
        from triton import knobs

        knobs.cache.dir = str(guarded / f"binaries{round_}")
        _compile("gemm_tma", 100)
        probes.append(wst.last_compile_report().probes)
        wst.disable()
        lguard.guard().forget()  # the second round reads the verdict file
    assert [p["cached"] for p in probes[0]] == [False]
    assert [p["cached"] for p in probes[1]] == [True]


def test_lowering_timeout_is_validated(isolated) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="lowering_timeout"):
        wst.enable("optimal", lowering_timeout=-1)
    assert wst.enable("optimal", lowering_timeout=0).lowering_timeout is None


def test_child_is_killed_not_orphaned(fresh_guard) -> None:
    fresh_guard.probe(_job(GEMM, 100), 1.0, function="guard_stubs:hang_in_pipeline")
    server = fresh_guard._server
    assert server is not None
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children")
    if children.exists():
        assert children.read_text().split() == []
    fresh_guard.shutdown()
    with pytest.raises(ProcessLookupError):
        os.kill(server.proc.pid, 0)


@pytest.mark.triton36
def test_real_pipeline_hang_is_caught(fresh_guard) -> None:
    """The plan that made Triton 3.6's sm_90 `pipeline` spin forever (a wgmma whose shared
    operand is defined before the loop, in a non-default partition; rule R1 of
    docs/triton-lowering-rules.md), spelled out in benchmarks/cpu/lowering_pairs.json."""
    probe_script = pytest.importorskip("benchmarks.cpu.lowering_probe")
    hanging, fixed = probe_script.pair_variants()[:2]
    assert "R1" in hanging.rules and "R1" not in fixed.rules
    cap, warps, stages = probe_script.file_options(hanging.file)
    job = lguard.LoweringJob(
        hanging.text, cap, CUDAOptions(num_warps=warps, num_stages=stages), warps, (), False, False
    )
    verdict = fresh_guard.probe(job, 3.0)
    assert verdict.status == "hang" and verdict.stage == "pipeline", verdict
    assert verdict.reason == "Triton's pipeline did not finish in 3 s"
    job = lguard.LoweringJob(
        fixed.text, cap, CUDAOptions(num_warps=warps, num_stages=stages), warps, (), False, False
    )
    # The fixed plan lowers through the pipeline; the kernel it makes needs more shared memory
    # than a block has (296,048 B), which the probe says rather than a launch failing.
    fixed_verdict = fresh_guard.probe(job, 60)
    assert fixed_verdict.ok or "B of shared memory" in fixed_verdict.reason, fixed_verdict
    assert fixed_verdict.status != "hang"


@pytest.mark.triton36
def test_probe_catches_a_failure_in_make_llir(fresh_guard) -> None:
    """Two WS loops that Triton gives different warp counts pass make_ttgir and fail only in
    make_llir (setmaxnreg out of range); the probe lowers that far, so the drop-in can fall
    back. The module: the CP-SAT plan of causal attention d64 on sm_100, as first found."""
    job = lguard.LoweringJob(
        text=(TESTS / "data" / "llir_setmaxnreg.sm100.ttgir").read_text(),
        capability=100,
        options=CUDAOptions(num_warps=4, num_stages=3),
        num_warps=4,
        registers=(),
        apply_registers=False,
        hopper=False,
    )
    verdict = fresh_guard.probe(job, 60)
    assert verdict.status == "error" and verdict.stage == "llir", verdict
    assert "setmaxregister" in verdict.message + verdict.stderr, verdict


@pytest.mark.triton36
def test_a_plan_ptxas_rejects_falls_back(isolated) -> None:  # noqa: F811
    """explore:K goes to ptxas in the probe: Triton 3.6's ptxas cannot fit explore:1 of
    gemm_persistent t128x256x64 relu w8 s2 in its 128 registers, and the compile falls back to
    `optimal` with ptxas's reason instead of raising."""
    import json

    import triton
    from triton.backends.compiler import GPUTarget

    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source

    index = json.loads((REPO_ROOT / "corpus" / "configspace" / "index.json").read_text())
    (config,) = (
        c["config"]
        for c in index["configs"]
        if (c["family"], c["name"]) == ("gemm_persistent", "t128x256x64_relu_w8_s2")
    )
    with dropin.partitioner("explore:1", cache=False):
        kernel = triton.compile(
            ast_source("gemm_persistent", config),
            target=GPUTarget("cuda", 90, 32),
            options=corpus_kernels.options(config),
        )
        report = dropin.last_compile_report().to_dict()
    assert kernel.asm["cubin"]
    assert report["strategy_used"] == "optimal", report
    (fallback,) = report["fallbacks"]
    assert fallback["strategy"] == "explore:1"
    assert "ptxas: (C7602) Insufficient registers (128)" in fallback["reason"], fallback

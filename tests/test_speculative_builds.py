"""The decision check's builds side by side (dropin/builds.py): on a measured target stock's
build starts beside ours where cores allow and is used only where a rule asks for it; one no
rule asked for is cancelled and leaves no process; the report is the same either way. CPU
only."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("triton")

from test_dropin import _compile, isolated  # noqa: E402, F401
from test_guard_parallel import _gone  # noqa: E402

import ws_solver.triton as wst  # noqa: E402
from ws_solver.triton.dropin import builds  # noqa: E402
from ws_solver.triton.guard import client as lguard  # noqa: E402

pytestmark = pytest.mark.triton

PROBE = lguard.LoweringGuard.probe  # unwrapped, whatever a test wraps it in


def test_an_unasked_speculative_build_is_killed_with_what_it_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(builds, "STOCK_PROBE", "guard_stubs:hang_with_a_tool")
    pids = tmp_path / "pids"
    settings = SimpleNamespace(lowering_timeout=600)
    options = lguard._PlainOptions(num_warps=4)
    spec = builds.Builds(settings, 90, options, str(tmp_path), lambda text, requests: None)
    spec.ttir = str(pids)  # what the stand-in writes its pids to
    spec.start_stock(speculative=True)
    end = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < end:
        time.sleep(0.05)
    child, tool = (int(p) for p in pids.read_text().split())
    spec.drop_speculation()  # the compile ended, no rule asked for stock's build
    assert _gone(child) and _gone(tool)
    assert not list(tmp_path.rglob("*.json"))  # a cancelled build is kept nowhere


def test_an_asked_speculative_build_is_waited_for(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(builds, "STOCK_PROBE", "guard_stubs:sleep_and_say_when")
    settings = SimpleNamespace(lowering_timeout=60)
    options = lguard._PlainOptions(num_warps=4)
    spec = builds.Builds(settings, 90, options, str(tmp_path), lambda text, requests: None)
    spec.ttir = "0.5 stock"
    spec.start_stock(speculative=True)
    built = spec.stock()  # a rule asked
    spec.drop_speculation()
    assert built.status == "ok" and spec.stock_verdict is not None
    assert spec.stock_verdict.facts["text"] == "0.5 stock"


def _decisions(isolated, monkeypatch, config: str, parallel: bool) -> tuple[dict, list[str]]:  # noqa: F811
    """The decision record of one compile, and the guard's probes it made."""
    monkeypatch.setattr(builds, "spare_core", lambda: True)
    asked: list[str] = []

    def counted(self, job, timeout_s=60.0, cache_dir=None, function=None):
        asked.append((function or "").rsplit(":", 1)[-1])
        return PROBE(self, job, timeout_s, cache_dir, function)

    monkeypatch.setattr(lguard.LoweringGuard, "probe", counted)
    lguard.guard().forget()
    wst.enable("optimal", cache_dir=isolated / f"c-{config}-{parallel}", parallel_builds=parallel)
    try:
        _compile("gemm_tma_indesc", 90, config)
        report = wst.last_compile_report()
    finally:
        wst.disable()
        lguard.guard().forget()
    return report.decision, asked


@pytest.mark.parametrize(
    ("config", "rule"),
    [("t128x128x64_w4_s3", "measured target"), ("t128x256x64_w4_s3", "spill check: stock")],
)
def test_the_report_is_the_same_with_builds_side_by_side(isolated, monkeypatch, config, rule):  # noqa: F811
    one_by_one, asked = _decisions(isolated, monkeypatch, config, parallel=False)
    side_by_side, asked_beside = _decisions(isolated, monkeypatch, config, parallel=True)
    assert side_by_side == one_by_one and one_by_one["rule"] == rule
    assert "probe_stock" in asked_beside  # stock's build started beside ours
    if rule == "measured target":
        assert "probe_stock" not in asked  # and only there
        assert side_by_side["stock"]["status"] == "not built"


def test_no_thread_is_left_waiting(isolated, monkeypatch) -> None:  # noqa: F811
    _decisions(isolated, monkeypatch, "t128x128x64_w4_s3", parallel=True)
    end = time.monotonic() + 30
    while time.monotonic() < end and _stock_threads_busy():
        time.sleep(0.1)
    assert not _stock_threads_busy()


def _stock_threads_busy() -> bool:
    """Whether a build thread still waits on the guard (the pool's idle threads wait on its
    queue, not in the guard)."""
    import sys
    import traceback

    frames = sys._current_frames()
    for thread in threading.enumerate():
        if thread.name.startswith("ws_solver-stock") and thread.ident in frames:
            stack = "".join(traceback.format_stack(frames[thread.ident]))
            if "guard" in stack and "probe" in stack:
                return True
    return False


def test_the_setting_and_its_variable() -> None:
    from ws_solver.triton.dropin.environ import VARIABLES

    assert ("WS_SOLVER_PARALLEL_BUILDS", "parallel_builds") in {
        (v.name, v.keyword) for v in VARIABLES
    }
    assert Path(builds.__file__).name == "builds.py"


def test_the_heuristic_s_plan_built_beside_the_solve_is_optimal_s_build(isolated, monkeypatch):  # noqa: F811
    """`optimal` keeps the heuristic's plan here: the build started before the solve is the
    one the decision check weighs (asked twice, built once); without spare cores, no guess."""
    ran: list[str] = []
    run = lguard.LoweringGuard._run

    def counted(self, job, timeout_s, function, *rest):
        ran.append(function.rsplit(":", 1)[-1])
        return run(self, job, timeout_s, function, *rest)

    monkeypatch.setattr(lguard.LoweringGuard, "_run", counted)
    decision, asked = _decisions(isolated, monkeypatch, "t128x128x64_w4_s3", parallel=True)
    assert decision["rule"] == "measured target"
    assert asked.count("probe_binary") == 2 and ran.count("probe_binary") == 1, (asked, ran)
    ran.clear()
    _, asked = _decisions(isolated, monkeypatch, "t128x128x64_w4_s3", parallel=False)
    assert asked.count("probe_binary") == 1 and ran.count("probe_binary") == 1


def test_nothing_speculative_runs_on_once_the_compile_drops_it(tmp_path, monkeypatch) -> None:
    """A speculative build the cancel misses (it started just after) is waited for:
    `drop_speculation` returns with no thread of its still running, and nothing lands in the
    compile's cache folder afterwards (a benchmark removing that folder failed on one)."""
    monkeypatch.setattr(lguard.LoweringGuard, "cancel", lambda self, key: False)
    settings = SimpleNamespace(lowering_timeout=60)
    options = lguard._PlainOptions(num_warps=4)

    def job(text: str, requests) -> lguard.LoweringJob:
        return lguard.LoweringJob(text, 90, options, 4, (), False, hopper=False)

    spec = builds.Builds(
        settings, 90, options, str(tmp_path), job, "guard_stubs:sleep_and_say_when"
    )
    guess = SimpleNamespace(annotated="1.5 guess", loop_reports=[])
    spec.speculate(lambda: guess, lambda c: ())
    time.sleep(0.3)  # under way
    spec.drop_speculation()
    assert not _stock_threads_busy()
    written = sorted(tmp_path.rglob("*"))
    time.sleep(1.5)
    assert sorted(tmp_path.rglob("*")) == written

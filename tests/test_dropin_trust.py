"""The drop-in checks what its partitioner returns before Triton lowers it: fault injection
at ``triton.dropin.kernel_compile.partition_text`` (another kernel, the input unchanged, nothing,
an exception, a hang). Each bad answer is a failed attempt with its reason in the warning and
the report, the fallback chain goes on, and the report names the partitioner whose plan
reached the binary. CPU only (Triton 3.6 compiles for sm_100 without a GPU)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("triton")

TESTS = Path(__file__).resolve().parent

from test_dropin import REPO_ROOT, _compile, _stub_solver, isolated  # noqa: E402, F401

import corpus  # noqa: E402
import ws_solver.triton as wst  # noqa: E402
from ws_solver.pipeline.partition import partition_text  # noqa: E402
from ws_solver.triton.dropin import kernel_compile  # noqa: E402

pytestmark = pytest.mark.triton

CORPUS = corpus.ttgir_dir()
OTHER_KERNEL = CORPUS / "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir"


def _inject(monkeypatch, answer) -> list[str]:
    """Replace the drop-in's partitioner with ``answer(text, strategy, reports)``, where
    ``reports`` are what the real partitioner says about ``text``; returns the strategies
    it was asked for."""
    asked: list[str] = []

    def fake(text: str, strategy: str = "optimal", **kwargs):
        asked.append(strategy)
        _, reports = partition_text(text, strategy, **kwargs)
        return answer(text, strategy, reports)

    monkeypatch.setattr(kernel_compile, "partition_text", fake)
    return asked


def _compiled_with_fallback(match: str):
    """Compile gemm_tma for sm_100 with the heuristic asked for; the warning must say
    ``match``. Returns (compiled, report)."""
    wst.enable("heuristic", lowering_timeout=None)
    with pytest.warns(wst.WSFallbackWarning, match=match):
        compiled = _compile("gemm_tma", 100)
    return compiled, wst.last_compile_report()


def test_another_kernels_module_is_refused(isolated, monkeypatch) -> None:  # noqa: F811
    _stub_solver(monkeypatch)
    other = OTHER_KERNEL.read_text()
    _inject(monkeypatch, lambda text, strategy, reports: (other, reports))
    compiled, report = _compiled_with_fallback("returned functions")
    assert report.strategy_used == "triton", report.fallbacks
    assert compiled.metadata.name == "gemm_tma_kernel"
    [failure] = report.fallbacks
    assert failure["strategy"] == "heuristic"
    assert "returned functions ['attention_fwd_kernel']" in failure["reason"]
    assert "UntrustedResult" in failure["reason"]


def test_input_returned_unchanged_is_not_reported_as_ours(isolated, monkeypatch) -> None:  # noqa: F811
    _stub_solver(monkeypatch)
    _inject(monkeypatch, lambda text, strategy, reports: (text, reports))
    compiled, report = _compiled_with_fallback("left tagged and unannotated")
    # Triton's partitioner specialized the loop, and the report says so.
    assert report.strategy_used == "triton"
    assert "ttg.warp_specialize" in compiled.asm["ttgir"]
    assert all(loop["strategy"] == "triton" for loop in report.loops)


def test_exception_in_partitioner_falls_back(isolated, monkeypatch) -> None:  # noqa: F811
    _stub_solver(monkeypatch)

    def explode(text, strategy, reports):
        raise RuntimeError("partitioner exploded")

    _inject(monkeypatch, explode)
    _, report = _compiled_with_fallback("partitioner exploded")
    assert report.strategy_used == "triton"


def test_hanging_partitioner_is_bounded(isolated, monkeypatch) -> None:  # noqa: F811
    _stub_solver(monkeypatch)
    stopped = threading.Event()

    def hang(text, strategy, reports):
        try:
            while True:
                time.sleep(0.01)
        finally:
            stopped.set()

    _inject(monkeypatch, hang)
    wst.enable("heuristic", lowering_timeout=None, partition_timeout=1)
    start = time.monotonic()
    with pytest.warns(wst.WSFallbackWarning, match=r"did not finish in 1 s"):
        compiled = _compile("gemm_tma", 100)
    assert time.monotonic() - start < 60
    report = wst.last_compile_report()
    assert report.strategy_used == "triton" and compiled.asm["cubin"]
    assert report.fallbacks[0]["reason"].startswith("DeadlineExceeded: partitioning (heuristic)")
    assert stopped.wait(10), "the hung partitioner's thread was not stopped"


EMPTY_ANSWER = """
import warnings
import ws_solver.triton as wst
from ws_solver.triton.dropin import kernel_compile
from test_dropin import _compile

kernel_compile.partition_text = lambda text, strategy="optimal", **kw: ("", [])
wst.enable("heuristic")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _compile("gemm_tma", 100)
report = wst.last_compile_report()
print("USED", report.strategy_used)
print("REASON", report.fallbacks[0]["reason"])
"""


def test_empty_answer_cannot_abort_the_process(tmp_path: Path) -> None:
    """The empty module used to skip the guard and reach Triton in-process, which asserted
    and took the process down (SIGABRT). In a child process, so that cannot happen here."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(TESTS)])
    env["WS_SOLVER_CACHE_DIR"] = str(tmp_path / "plans")
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    result = subprocess.run(
        [sys.executable, "-c", EMPTY_ANSWER],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert "USED triton" in result.stdout
    assert "returned functions []" in result.stdout


def test_bad_plan_cache_record_is_solved_again(isolated, monkeypatch) -> None:  # noqa: F811
    """A cached record with partition ids out of range used to make every compile fall back
    to Triton's partitioner; now it is a miss, solved again and rewritten."""
    import json

    from triton import knobs

    from ws_solver.pipeline import plancache, planrecord

    _stub_solver(monkeypatch)
    wst.enable("heuristic", lowering_timeout=None)
    _compile("gemm_tma", 100)
    assert wst.last_compile_report().strategy_used == "heuristic"
    [path] = (isolated / "plans").glob("*.json")
    record = json.loads(path.read_text())
    record["plan"]["assignment"] = [[9] if p == [1] else p for p in record["plan"]["assignment"]]
    body = {name: record[name] for name in planrecord.FIELDS}
    path.write_text(json.dumps({**record, "digest": plancache.digest(body)}))
    plancache.clear_memory()
    wst.reset_jit_caches()
    knobs.cache.dir = str(isolated / "triton-again")  # compile again, not from Triton's cache
    _compile("gemm_tma", 100)
    report = wst.last_compile_report()
    assert report.strategy_used == "heuristic" and not report.fallbacks
    assert report.loops[0]["plan_cache"] == "replaced"
    assert any(n.startswith("plan cache: loop 0: bad record solved again") for n in report.notes)
    assert json.loads(path.read_text())["plan"]["assignment"] != record["plan"]["assignment"]

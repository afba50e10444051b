"""A successful compile prints nothing of its internal attempts (issue 36 item 12): what MLIR
printed during the attempt that was kept goes to the compile report's notes."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("triton")

from test_dropin import _compile, _stub_solver, isolated  # noqa: F401

import ws_solver.triton as wst
from ws_solver.triton.dropin import kernel_compile

pytestmark = pytest.mark.triton


def test_diagnostics_of_the_kept_attempt_go_to_the_report(isolated, monkeypatch, capfd):  # noqa: F811
    _stub_solver(monkeypatch)
    real = kernel_compile.tpipe.run_after_partition

    def noisy(*args, **kwargs):
        os.write(2, b"error: 'arith.addi' op not assigned a pipeline stage\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(kernel_compile.tpipe, "run_after_partition", noisy)
    wst.enable("heuristic", lowering_timeout=0)  # in-process: the attempt runs here
    compiled = _compile("gemm_tma", 100)
    report = wst.last_compile_report()
    assert compiled.asm["cubin"] and not report.fallbacks
    assert "not assigned a pipeline stage" not in capfd.readouterr().err
    assert any("not assigned a pipeline stage" in note for note in report.notes)

"""ws_solver.triton.toolchain.reasons: the one line a failed compile attempt is reported with."""

from __future__ import annotations

from ws_solver.triton.toolchain.reasons import failure_reason, headline

# Triton 3.6's PTXASError text for explore:1 of gemm_persistent t128x256x64 relu w8 s2 (cut).
PTXAS_TEXT = """PTXAS error: Internal Triton PTX codegen error
`ptxas` stderr:
ptxas fatal   : (C7602) Insufficient registers (128) to compile instruction at line 1641 \
in function gemm_persistent_kernel. Try to compile with register target of 154 or higher.
ptxas fatal   : Ptx assembly aborted due to errors

Repro command: ..."""


class PTXASError(RuntimeError):
    pass


def test_a_ptxas_failure_says_what_ptxas_said():
    line = headline(PTXASError(PTXAS_TEXT))
    assert line.startswith("PTXAS error: Internal Triton PTX codegen error; ptxas: (C7602)")
    assert "Insufficient registers (128)" in line and "\n" not in line


def test_an_mlir_diagnostic_printed_earlier_is_not_blamed_for_a_ptxas_failure():
    stderr = "loc(...): error: 'arith.addi' op not assigned a pipeline stage\n"
    reason = failure_reason(PTXASError(PTXAS_TEXT), stderr)
    assert reason.startswith("PTXASError: PTXAS error") and "arith.addi" not in reason


def test_other_failures_keep_their_first_line_and_the_mlir_error():
    reason = failure_reason(RuntimeError("PassManager::run failed\nmore"), "x: error: bad op\n")
    assert reason == "RuntimeError: PassManager::run failed (bad op)"

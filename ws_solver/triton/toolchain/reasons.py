"""One line saying why a compile attempt failed: the exception, plus the MLIR error and the
failing pass when Triton printed them (the drop-in and the lowering guard's child agree)."""

from __future__ import annotations

import re

_MLIR_ERROR = re.compile(r"error:\s*(.+)")
_ASSERTION = re.compile(r"Assertion `(.+?)' failed")
_UNREACHABLE = re.compile(r"([^\n]*)\n[^\n]*UNREACHABLE executed at [^\n]*?([\w.]+:\d+)!")
_FAILED_PIPELINE = re.compile(r"Pipeline failed while executing \[(.*?)\]")
_PASS_NAME = re.compile(r"`(\w+)` on")
_PTXAS_FATAL = re.compile(r"ptxas fatal\s*:\s*(.+)")
PTXAS = "; ptxas: "


def headline(e: Exception) -> str:
    """An exception's first line; for ptxas's failure, with ptxas's own first fatal message
    (Triton's first line only says "Internal Triton PTX codegen error")."""
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    fatal = _PTXAS_FATAL.search(text)
    return f"{first}{PTXAS}{fatal.group(1).strip()[:200]}" if fatal else first


def failure_reason(e: Exception, stderr: str) -> str:
    """One line: the exception, plus the MLIR error and failing pass when Triton printed them."""
    return reason_from(type(e).__name__, headline(e), stderr)


def reason_from(type_name: str, first: str, stderr: str) -> str:
    """``failure_reason`` from an exception's type name and first line (the guard's child sends
    those)."""
    reason = f"{type_name}: {first}" if first else type_name
    if PTXAS in first:  # ptxas said why; an MLIR diagnostic printed earlier did not fail it
        return reason
    errors = _MLIR_ERROR.findall(stderr)
    useful = [m for m in errors if "Failures have been detected" not in m]
    assertion = _ASSERTION.search(stderr)
    unreachable = _UNREACHABLE.search(stderr)
    if assertion:  # a failed assertion says more than "A signal was caught"
        useful.insert(0, f"assertion failed: {assertion.group(1)}")
    elif unreachable:
        useful.insert(0, f"unreachable: {unreachable.group(1)} ({unreachable.group(2)})")
    if useful:
        reason += f" ({useful[0].strip()[:200]})"
    failed = _FAILED_PIPELINE.search(stderr)
    if failed:
        names = _PASS_NAME.findall(failed.group(1))
        if names:
            reason += f" [in {' > '.join(names)}]"
    return reason

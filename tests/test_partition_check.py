"""The check of a partitioner's output against its input (ws_solver.triton.dropin.partition_check)
and the deadline the drop-in partitions under (triton.dropin.deadline). No Triton needed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ws_solver.pipeline.partition import partition_text
from ws_solver.triton.dropin.deadline import DeadlineExceeded, call_with_deadline
from ws_solver.triton.dropin.partition_check import UntrustedResult, check_partitioned

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"


GEMM = CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"


def test_check_accepts_what_the_pipeline_writes() -> None:
    text = GEMM.read_text()
    for strategy, expected in (("heuristic", [True]), ("none", [False])):
        annotated, reports = partition_text(text, strategy)
        assert check_partitioned(text, annotated, reports) == expected


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda t: t.replace("arith.addi", "arith.subi", 1), "its ops differ"),
        (lambda t: t.replace("addi %M, %num_pid_m", "addi %num_pid_m, %M"), "more than partition"),
        (lambda t: t.replace(", ttg.partition = array<i32: 1>}", "}", 1), "partly annotated"),
        (lambda t: t.replace("divisibility = 16", "divisibility = 8", 1), "more than partition"),
        (lambda t: t[: t.rindex("#loc")], "does not parse"),
        (
            lambda t: t.replace("ttg.partition = array<i32: 1>", "ttg.partition = array<i32: 5>"),
            "names partition 5, the loop has 2",
        ),
    ],
)
def test_check_refuses_other_changes(edit, says: str) -> None:
    text = GEMM.read_text()
    annotated, reports = partition_text(text, "heuristic")
    changed = edit(annotated)
    assert changed != annotated
    with pytest.raises(UntrustedResult, match=says):
        check_partitioned(text, changed, reports)


def test_check_refuses_a_report_that_disagrees() -> None:
    text = GEMM.read_text()
    _, reports = partition_text(text, "heuristic")
    cleared, _ = partition_text(text, "none")
    with pytest.raises(UntrustedResult, match="reported loops specialized"):
        check_partitioned(text, cleared, reports)


def test_deadline() -> None:
    assert call_with_deadline(lambda: 7, 5, "seven") == 7
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(lambda: 1 / 0, 5, "division")
    with pytest.raises(DeadlineExceeded, match="sleeping did not finish in 0.2 s"):
        call_with_deadline(lambda: [time.sleep(0.05) for _ in range(1000)], 0.2, "sleeping")

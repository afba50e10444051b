"""Counts in CLI and report output read as English: "1 loop", "2 loops"."""

from __future__ import annotations

import re
from pathlib import Path

import ws_solver
from ws_solver.core.wording import count
from ws_solver.report.compare import summary_lines

GEMM = Path(__file__).resolve().parent.parent / "corpus/ttgir/gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


def test_count() -> None:
    assert count(1, "loop") == "1 loop" and count(0, "loop") == "0 loops"
    assert count(2, "process", "processes") == "2 processes"


def test_a_one_loop_comparison_says_loop_not_loops() -> None:
    document = ws_solver.compare(GEMM, time_limit=0.5, workers=1)
    document["timing"]["jobs"] = 1
    text = "\n".join(summary_lines(document))
    assert text.startswith("1 loop from 1 file; ") and "1 solver worker," in text
    assert "1 job," in text
    assert not re.search(r"\b1 (solved )?(loops|files|jobs|solver workers)\b", text), text
    assert "(s)" not in text, text

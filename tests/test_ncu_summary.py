"""benchmarks/analysis/ncu_source_summary.py on a small page in Nsight Compute's source-view
layout."""

from __future__ import annotations

import gzip
from pathlib import Path

from benchmarks.analysis import ncu_source_summary as ncu

REPO_ROOT = Path(__file__).resolve().parent.parent

WIDTHS = (10, 24, 14, 8, 8)
TITLES = (("Address", ""), ("Source", ""), ("Warp Stall Sam", "pling (All)"), ("stall_wa", "it"))


def _row(*cells: str) -> str:
    return " ".join(c.ljust(w) for c, w in zip(cells, WIDTHS, strict=False))


def _page(rows: list[tuple[str, str, str, str, str]]) -> str:
    rule = " ".join("-" * w for w in WIDTHS)
    header = [_row(*(t[i] for t in TITLES), "stall_ba" if i == 0 else "rrier") for i in (0, 1)]
    body = [_row(*r) for r in rows]
    return "\n".join(["==PROF== noise", rule, "Kernel Name  k", rule, *header, *body]) + "\n"


PAGE = _page(
    [
        ("0x10", "FMUL R1, R2, R3", "10", "8", "0"),
        ("0x20", "HGMMA.64x128x16.F32", "5", "1", "0"),
        ("0x30", "MUFU.EX2 R4, R4", "30", "20", "0"),
        ("0x40", "FADD R5, R4, R5", "15", "10", "0"),
        ("0x50", "BAR.SYNC.DEFER_BLOCKING", "40", "0", "39"),
    ]
)


def test_rows_carry_samples_and_stall_reasons():
    rows = ncu.parse(PAGE)
    assert [r.sass for r in rows][:2] == ["FMUL R1, R2, R3", "HGMMA.64x128x16.F32"]
    assert [r.samples for r in rows] == [10, 5, 30, 15, 40]
    assert rows[4].stalls == {"wait": 0, "barrier": 39}


def test_summary_groups_samples_between_control_instructions():
    text = ncu.summary(ncu.parse(PAGE), top=2)
    assert "100 warp samples" in text
    assert "2-3" in text and "45.0%" in text  # MUFU + FADD between the HGMMA and the barrier
    assert text.index("MUFU.EX2") < text.index("BAR.SYNC")  # hottest listed in address order


def test_main_reads_gzip_and_reports_bad_input(tmp_path, capsys):
    page = tmp_path / "page_sass.txt.gz"
    page.write_bytes(gzip.compress(PAGE.encode()))
    assert ncu.main([str(page)]) == 0
    assert "BAR.SYNC" in capsys.readouterr().out
    empty = tmp_path / "empty.txt"
    empty.write_text("no table here\n")
    assert ncu.main([str(empty)]) == 2
    assert "no source table" in capsys.readouterr().err

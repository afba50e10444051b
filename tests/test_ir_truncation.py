"""A truncated TTGIR file is refused with its line and column, never read as a whole module:
truncation at every byte of the last 2 KB of a corpus file (where MLIR prints the location
aliases), parse only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ws_solver import ir

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
SMALL = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"  # the smallest corpus file
TAIL = 2048
_DEFINITION = re.compile(r"(#[\w$.\-]+) = [^\n]*\n?")


def complete(text: str, cut: int) -> bool:
    """Whether `text[:cut]` is still a whole module: only blanks are gone, or whole alias
    definitions that nothing left refers to."""
    kept, lost = text[:cut], text[cut:]
    if not lost.strip():
        return True
    if cut and text[cut - 1] != "\n":
        return False
    names = []
    for line in lost.splitlines(keepends=True):
        found = _DEFINITION.fullmatch(line)
        if found is None:
            return False
        names.append(found.group(1))
    return not any(re.search(re.escape(n) + r"(?![\w$.\-])", kept) for n in names)


def test_every_truncation_of_the_tail_is_refused_or_complete() -> None:
    text = SMALL.read_text()
    assert len(text) > TAIL and text.endswith(")\n")
    refused = 0
    for cut in range(len(text) - TAIL, len(text)):
        truncated = text[:cut]
        if complete(text, cut):
            assert ir.parse(truncated).print() == truncated
            continue
        with pytest.raises(ir.ParseError) as caught:
            ir.parse(truncated)
        error = caught.value
        lines = truncated.split("\n")
        assert 1 <= error.line <= len(lines), (cut, error)
        assert 1 <= error.column <= len(lines[error.line - 1]) + 1, (cut, error)
        refused += 1
    assert refused > TAIL - 10


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("module {\n} loc(#loc)\n", "undefined location alias #loc"),
        ('#loc = loc("f.py":1:0)\nmodule {\n} loc(#loc1)\n', "undefined location alias #loc1"),
        ('#loc = loc("f.py":1:0\nmodule {\n} loc(#loc)\n', "unclosed '('"),
        ("#loc = loc\nmodule {\n} loc(#loc)\n", "expected '(' after loc"),
        ('#loc = loc("f.py":1:0))\nmodule {\n} loc(#loc)\n', "unexpected ')'"),
        ("#b = #ttg.blocked<{order = [1, 0]}\nmodule {\n}\n", "unclosed '<'"),
    ],
)
def test_bad_alias_definitions_and_uses(text: str, reason: str) -> None:
    with pytest.raises(ir.ParseError, match=re.escape(reason)):
        ir.parse(text)


def test_head_c_minus_20_of_every_corpus_file_is_refused() -> None:
    """The reproducer of the issue (`head -c -20`) on every corpus file."""
    for path in sorted(CORPUS.glob("*.ttgir")):
        text = path.read_text()
        with pytest.raises(ir.ParseError):
            ir.parse(text[:-20])

"""Unit tests of ws_solver.ir.lexer: token kinds, offsets, ends of lines, errors."""

from __future__ import annotations

import pytest

from ws_solver.ir import ParseError
from ws_solver.ir.lexer import SourceMap, tokenize


def _tokens(text: str):
    return tokenize(text, SourceMap(text))


def test_kinds_and_offsets() -> None:
    text = (
        '%a:2 = "tt.reduce"(%x#1) <{axis = -1 : i32}> ^bb0 #blocked !tt.ptr @f @"q f" -> ... '
        "0x1F 1.5e+3 {-# #-}"
    )
    toks = _tokens(text)
    assert [(t.kind, t.text) for t in toks] == [
        ("value", "%a"),
        ("punct", ":"),
        ("number", "2"),
        ("punct", "="),
        ("string", '"tt.reduce"'),
        ("punct", "("),
        ("value", "%x#1"),
        ("punct", ")"),
        ("punct", "<"),
        ("punct", "{"),
        ("ident", "axis"),
        ("punct", "="),
        ("number", "-1"),
        ("punct", ":"),
        ("ident", "i32"),
        ("punct", "}"),
        ("punct", ">"),
        ("block", "^bb0"),
        ("hash", "#blocked"),
        ("bang", "!tt.ptr"),
        ("symbol", "@f"),
        ("symbol", '@"q f"'),
        ("arrow", "->"),
        ("punct", "..."),
        ("number", "0x1F"),
        ("number", "1.5e+3"),
        ("resource_open", "{-#"),
        ("resource_close", "#-}"),
    ]
    for t in toks:
        assert text[t.start : t.end] == t.text
    assert [t.eol for t in toks] == [False] * (len(toks) - 1) + [True]


def test_end_of_line_flags_skip_blank_lines_and_comments() -> None:
    text = "a b // note\n\n  // only a comment\nc\t\r\n d  "
    toks = _tokens(text)
    assert [(t.text, t.eol) for t in toks] == [("a", False), ("b", True), ("c", True), ("d", True)]
    assert list(_tokens("")) == [] and list(_tokens(" \n\t\n// x")) == []


@pytest.mark.parametrize(
    ("text", "line", "column", "reason"),
    [
        ("a ~", 1, 3, "unexpected '~'"),
        ("a\n  \t $", 2, 5, "unexpected '$'"),
        ('x = "abc\n"', 1, 5, "unterminated string"),
        ('"abc', 1, 1, "unterminated string"),
        ("ok\n  \u00e9", 2, 3, "unexpected '\u00e9'"),
        ("a\x00", 1, 2, "unexpected '\\x00'"),
    ],
)
def test_errors(text: str, line: int, column: int, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        _tokens(text)
    assert (info.value.line, info.value.column, info.value.reason) == (line, column, reason)


def test_source_map() -> None:
    source = SourceMap("ab\ncd\n\nef")
    assert source.position(0) == (1, 1)
    assert source.position(2) == (1, 3)
    assert source.position(3) == (2, 1)
    assert source.position(7) == (4, 1)
    assert source.position(9) == (4, 3)

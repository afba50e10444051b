"""Tokens of MLIR's textual form, with byte offsets so the printer can splice edits."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .errors import ParseError

# Kinds of tokens.
VALUE = "value"  # %name or %name#3
BLOCK = "block"  # ^bb0
HASH = "hash"  # #alias, #dialect.attr
BANG = "bang"  # !dialect.type
SYMBOL = "symbol"  # @name
STRING = "string"
NUMBER = "number"
IDENT = "ident"
ARROW = "arrow"  # ->
PUNCT = "punct"
RESOURCE_OPEN = "resource_open"  # {-#
RESOURCE_CLOSE = "resource_close"  # #-}

_SUFFIX = r"[A-Za-z0-9_$.\-]+"
_TOKEN_RE = re.compile(
    "|".join(
        [
            r"(?P<newline>\n)",
            r"(?P<space>[ \t\r]+)",
            r"(?P<comment>//[^\n]*)",
            r"(?P<resource_open>\{-\#)",
            r"(?P<resource_close>\#-\})",
            r'(?P<string>"(?:[^"\\\n]|\\.)*")',
            rf"(?P<value>%{_SUFFIX}(?:\#[0-9]+)?)",
            rf"(?P<block>\^{_SUFFIX})",
            rf"(?P<hash>\#{_SUFFIX})",
            rf"(?P<bang>!{_SUFFIX})",
            rf'(?P<symbol>@(?:{_SUFFIX}|"(?:[^"\\\n]|\\.)*"))',
            r"(?P<arrow>->)",
            r"(?P<number>-?(?:0x[0-9A-Fa-f]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?))",
            r"(?P<ident>[A-Za-z_][A-Za-z0-9_$.]*)",
            r"(?P<punct>\.\.\.|[(){}\[\]<>,:=*+?|\-])",
        ]
    )
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int
    end: int
    eol: bool  # last token on its line


class SourceMap:
    """Turns byte offsets of one text into 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, reason: str, offset: int) -> ParseError:
        return ParseError(reason, *self.position(offset))


def tokenize(text: str, source: SourceMap) -> list[Token]:
    """Split text into tokens; anything that is not MLIR syntax raises ParseError."""
    raw: list[tuple[str, int, int]] = []
    last_on_line: set[int] = set()
    pos = 0
    match = _TOKEN_RE.match
    while pos < len(text):
        m = match(text, pos)
        if m is None:
            reason = "unterminated string" if text[pos] == '"' else f"unexpected {text[pos]!r}"
            raise source.error(reason, pos)
        kind = m.lastgroup
        if kind == "newline":
            if raw:
                last_on_line.add(len(raw) - 1)
        elif kind not in ("space", "comment"):
            raw.append((kind, pos, m.end()))
        pos = m.end()
    last_on_line.add(len(raw) - 1)
    return [
        Token(kind, text[start:end], start, end, i in last_on_line)
        for i, (kind, start, end) in enumerate(raw)
    ]

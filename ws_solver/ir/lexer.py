"""Tokens of MLIR's textual form, with byte offsets so the printer can splice edits."""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

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
# One match per token, with the blanks before it; `end` matches the blanks at the very end.
_TOKEN_RE = re.compile(
    r"[ \t\r]*(?:"
    + "|".join(
        [
            r"(?P<newline>\n)",
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
            r"(?P<end>\Z)",
        ]
    )
    + ")"
)


class Token(NamedTuple):
    kind: str
    text: str
    start: int
    end: int
    eol: bool  # last token on its line


class SourceMap:
    """Turns byte offsets of one text into 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, reason: str, offset: int) -> ParseError:
        return ParseError(reason, *self.position(offset))


def tokenize(text: str, source: SourceMap) -> list[Token]:
    """Split text into tokens; anything that is not MLIR syntax raises ParseError."""
    tokens: list[Token] = []
    append = tokens.append
    pos = 0
    for m in _TOKEN_RE.finditer(text):
        if m.start() != pos:  # finditer skipped text that no token matches
            break
        pos = m.end()
        kind = m.lastgroup
        if kind == "newline":
            if tokens and not tokens[-1].eol:
                tokens[-1] = tokens[-1]._replace(eol=True)
        elif kind == "end":
            break
        elif kind != "comment":
            start = m.start(kind)
            append(Token(kind, text[start:pos], start, pos, False))
    if pos < len(text):
        bad = pos
        while text[bad] in " \t\r":
            bad += 1
        reason = "unterminated string" if text[bad] == '"' else f"unexpected {text[bad]!r}"
        raise source.error(reason, bad)
    if tokens and not tokens[-1].eol:
        tokens[-1] = tokens[-1]._replace(eol=True)
    return tokens

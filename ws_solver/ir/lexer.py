"""Tokens of MLIR's textual form, with byte offsets so the printer can splice edits."""

from __future__ import annotations

import bisect
import functools
import re
from array import array
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
            r"(?P<bad>.)",  # anything else: an error (so that no text is ever skipped)
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


KINDS = (VALUE, BLOCK, HASH, BANG, SYMBOL, STRING, NUMBER, IDENT, ARROW, PUNCT)
KINDS += (RESOURCE_OPEN, RESOURCE_CLOSE)
KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}
EOL = 0x80
_KIND_MASK = EOL - 1
_make_token = functools.partial(tuple.__new__, Token)  # without NamedTuple's slower __new__
# Per group number of _TOKEN_RE (m.lastindex, cheaper than m.lastgroup): the token's kind
# code, or what the blanks-and-more match is.
_NEWLINE, _COMMENT, _STOP = -1, -2, -3
_CODE_OF_GROUP = [0] * (_TOKEN_RE.groups + 1)
for _name, _group in _TOKEN_RE.groupindex.items():
    _CODE_OF_GROUP[_group] = KIND_CODES.get(
        _name, {"newline": _NEWLINE, "comment": _COMMENT}.get(_name, _STOP)
    )


class Tokens:
    """The tokens of one text, packed: per token a start offset (4 bytes; 8 for texts of
    2 GiB and more), a length byte and a kind byte whose high bit marks the end of a line;
    about 6 bytes a token rather than a Python object. Indexing makes the `Token`."""

    __slots__ = ("text", "starts", "lengths", "long", "codes")

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = array("i" if len(text) < 2**31 else "q")
        self.lengths = bytearray()  # 255: look in `long`
        self.long: dict[int, int] = {}  # token index -> length, for tokens of 255+ chars
        self.codes = bytearray()  # kind code | EOL

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> Token:
        if i < 0:
            i += len(self.starts)
        start, code, length = self.starts[i], self.codes[i], self.lengths[i]
        end = start + (length if length < 255 else self.long[i])
        return _make_token(
            (KINDS[code & _KIND_MASK], self.text[start:end], start, end, code > _KIND_MASK)
        )

    def mark_eol(self) -> None:
        """The last token ends its line."""
        if self.codes:
            self.codes[-1] |= EOL


class SourceMap:
    """Turns byte offsets of one text into 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self._line_starts = array("q", [0])
        self._line_starts.extend(m.end() for m in re.finditer("\n", text))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def error(self, reason: str, offset: int) -> ParseError:
        return ParseError(reason, *self.position(offset))


def tokenize(text: str, source: SourceMap) -> Tokens:
    """Split text into tokens; anything that is not MLIR syntax raises ParseError."""
    tokens = Tokens(text)
    starts, lengths, codes = tokens.starts, tokens.lengths, tokens.codes
    add_start, add_length, add_code = starts.append, lengths.append, codes.append
    code_of = _CODE_OF_GROUP
    pos = 0
    for m in _TOKEN_RE.finditer(text):
        group = m.lastindex
        code = code_of[group]
        if code >= 0:
            start, pos = m.span(group)
            if pos - start < 255:
                add_length(pos - start)
            else:
                tokens.long[len(starts)] = pos - start
                add_length(255)
            add_start(start)
            add_code(code)
        elif code == _NEWLINE:
            if codes:
                codes[-1] |= EOL
        elif code == _STOP:
            pos = m.start(group)
            break
    if pos < len(text):
        bad = pos
        while text[bad] in " \t\r":
            bad += 1
        reason = "unterminated string" if text[bad] == '"' else f"unexpected {text[bad]!r}"
        raise source.error(reason, bad)
    tokens.mark_eol()
    return tokens

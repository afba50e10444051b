"""Attribute dictionaries: raw text per entry, parsed values for the simple kinds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .types import split_top_level

_BARE_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_KEY_RE = re.compile(r'("(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_$.]*)\s*')
_ESCAPE_RE = re.compile(r"\\([0-9A-Fa-f]{2}|.)")
_INT_RE = re.compile(r"(-?[0-9]{1,40})(?:\s*:\s*[su]?i[0-9]+|\s*:\s*index)?")
_ARRAY_RE = re.compile(r"array<\s*i[0-9]+\s*(?::(.*))?>", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Attribute:
    """One entry of an attribute dictionary. `raw` is None for a unit attribute."""

    name: str
    raw: str | None

    @property
    def value(self) -> Any:
        """True for unit; int, bool, str, tuple of ints, or list of those; else None."""
        return True if self.raw is None else parse_value(self.raw)

    def print(self) -> str:
        key = self.name if _BARE_KEY_RE.fullmatch(self.name) else _quote(self.name)
        return key if self.raw is None else f"{key} = {self.raw}"


def parse_value(raw: str) -> Any:
    raw = raw.strip()
    if raw in ("true", "false"):
        return raw == "true"
    if m := _INT_RE.fullmatch(raw):
        return int(m.group(1))
    if m := _ARRAY_RE.fullmatch(raw):
        body = (m.group(1) or "").strip()
        try:
            return tuple(int(x) for x in split_top_level(body)) if body else ()
        except ValueError:
            return None
    if raw.startswith("[") and raw.endswith("]"):
        items = [parse_value(x) for x in split_top_level(raw[1:-1])]
        return None if any(x is None for x in items) else items
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return _unquote(raw)
    return None


def parse_dictionary(body: str) -> list[Attribute]:
    """Entries of `{...}` given the text between the braces; raises ValueError if malformed."""
    attrs = []
    for entry in split_top_level(body):
        if not entry:
            raise ValueError("empty attribute entry")
        m = _KEY_RE.match(entry)
        rest = entry[m.end() :] if m else ""
        if m is None or (rest and not rest.startswith("=")):
            raise ValueError(f"bad attribute name {entry.partition('=')[0].strip()!r}")
        key = m.group(1)
        key = _unquote(key) if key.startswith('"') else key
        raw = rest[1:].strip()
        if rest and not raw:
            raise ValueError(f"attribute {key} has no value")
        attrs.append(Attribute(key, raw if rest else None))
    return attrs


def print_dictionary(attrs: list[Attribute]) -> str:
    return "{" + ", ".join(a.print() for a in attrs) + "}"


# Spelling of the attribute kinds ws_solver writes.
def i32(value: int) -> str:
    return f"{value} : i32"


def i32_array(values: list[int] | tuple[int, ...]) -> str:
    return "array<i32: " + ", ".join(str(v) for v in values) + ">" if values else "array<i32>"


def array_of(raws: list[str]) -> str:
    return "[" + ", ".join(raws) + "]"


def _quote(text: str) -> str:
    # MLIR string escapes: \\, \", and \XX for each non-printable byte of the UTF-8.
    out = []
    for byte in text.encode():
        ch = chr(byte)
        if ch in '\\"':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" not in body:
        return body
    out, pos = bytearray(), 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos : m.start()].encode()
        escape = m.group(1)
        if len(escape) == 2:
            out.append(int(escape, 16))
        else:
            out += {"n": b"\n", "t": b"\t"}.get(escape, escape.encode())
        pos = m.end()
    out += body[pos:].encode()
    return out.decode(errors="replace")

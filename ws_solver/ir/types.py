"""Just enough of MLIR type syntax to know what a value is and how many bytes it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from math import prod

# Kinds of types the rest of ws_solver distinguishes.
TENSOR = "tensor"  # distributed register tensor
MEMDESC = "memdesc"  # shared or tensor memory descriptor
SCALAR = "scalar"  # integer, float, index, pointer
TOKEN = "token"  # async token / barrier token
DESCRIPTOR = "descriptor"  # TMA tensor descriptor
OTHER = "other"

SHARED_MEMORY = "shared"
TENSOR_MEMORY = "tensor"

_ELEMENT_BITS = {
    "i1": 8,  # stored as a byte
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "index": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "tf32": 32,
    "f64": 64,
}
_FLOAT8_RE = re.compile(r"f8E\w+")
_FLOAT4_RE = re.compile(r"f4E\w+")
# Bounded digit counts keep int() fast and within its 4300-digit limit on hostile input.
_DIMS_RE = re.compile(r"((?:[0-9]{1,18}|\?)x)*")
_INTEGER_RE = re.compile(r"[su]?i([0-9]{1,8})")


@dataclass(frozen=True, slots=True)
class Type:
    """A parsed result type: `text` is exactly as printed; the rest is derived from it."""

    text: str
    kind: str
    shape: tuple[int, ...] = ()
    element: str = ""
    encoding: str = ""  # e.g. "#blocked", "#mma", "#shared"
    memory: str = ""  # memdesc only: "shared" or "tensor"

    @property
    def num_elements(self) -> int:
        return prod(self.shape) if self.shape else 1

    @property
    def element_bits(self) -> int:
        return element_bits(self.element)

    @property
    def bytes(self) -> int:
        """Bytes the value occupies (whole tile for tensors and memdescs, 0 for tokens and for
        dynamic shapes)."""
        if self.kind in (TOKEN, OTHER, DESCRIPTOR) or -1 in self.shape:
            return 0
        return self.num_elements * self.element_bits // 8


UNKNOWN = Type("", OTHER)


def element_bits(element: str) -> int:
    if element in _ELEMENT_BITS:
        return _ELEMENT_BITS[element]
    if element.startswith("!tt.ptr"):
        return 64
    if _FLOAT8_RE.fullmatch(element):
        return 8
    if _FLOAT4_RE.fullmatch(element):
        return 4
    m = _INTEGER_RE.fullmatch(element)
    return int(m.group(1)) if m else 0


@cache
def _splitter(sep: str) -> re.Pattern[str]:
    # Strings (to their closing quote, or the end), arrows, brackets, and the separator.
    return re.compile(r'"(?:[^"\\]|\\.)*"?|->|[()\[\]{}<>]|' + re.escape(sep))


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside (), [], {}, <> and strings; parts are stripped."""
    parts, depth, start = [], 0, 0
    for m in _splitter(sep).finditer(text):
        ch = m.group()
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start : m.start()].strip())
            start = m.end()
    last = text[start:].strip()
    if last or parts:
        parts.append(last)
    return parts


def parse_type(text: str, aliases: dict[str, str] | None = None) -> Type:
    """Classify a type; anything unrecognised is kept as OTHER, never an error."""
    text = text.strip()
    if text.startswith("tensor<") and text.endswith(">"):
        shape, element, rest = _shaped(text[len("tensor<") : -1])
        return Type(text, TENSOR, shape, element, rest[0] if rest else "")
    if text.startswith("!ttg.memdesc<") and text.endswith(">"):
        shape, element, rest = _shaped(text[len("!ttg.memdesc<") : -1])
        encoding = rest[0] if rest else ""
        space = rest[1] if len(rest) > 1 else ""
        resolved = (aliases or {}).get(space, space)
        memory = TENSOR_MEMORY if "tensor_memory" in resolved else SHARED_MEMORY
        return Type(text, MEMDESC, shape, element, encoding, memory)
    if text.startswith("!ttg.async.token") or text.startswith("!ttng.async.token"):
        return Type(text, TOKEN)
    if text.startswith("!tt.tensordesc<"):
        return Type(text, DESCRIPTOR)
    if text.startswith("!tt.ptr<") or text in _ELEMENT_BITS or element_bits(text):
        return Type(text, SCALAR, (), text)
    return Type(text, OTHER)


def _shaped(body: str) -> tuple[tuple[int, ...], str, list[str]]:
    parts = split_top_level(body)
    head = parts[0] if parts else ""
    dims = _DIMS_RE.match(head).group(0)
    shape = tuple(int(d) if d.isdigit() else -1 for d in dims.split("x") if d)
    return shape, head[len(dims) :], parts[1:]


def pointee(type_: Type) -> Type:
    """The type `tt.load` produces from a pointer (tensor of pointers → tensor of elements)."""
    m = re.match(r"!tt\.ptr<([^,>]+)", type_.element)
    if not m:
        return UNKNOWN
    element = m.group(1).strip()
    if type_.kind == TENSOR:
        dims = "x".join(str(d) for d in type_.shape)
        enc = f", {type_.encoding}" if type_.encoding else ""
        return parse_type(f"tensor<{dims}x{element}{enc}>")
    return parse_type(element)


def with_element(type_: Type, element: str) -> Type:
    """Same shape and encoding, another element type (e.g. i1 for comparisons)."""
    if type_.kind != TENSOR:
        return parse_type(element)
    dims = "x".join(str(d) for d in type_.shape)
    enc = f", {type_.encoding}" if type_.encoding else ""
    return parse_type(f"tensor<{dims}x{element}{enc}>")

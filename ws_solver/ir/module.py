"""The parsed module: ops, values, regions and blocks, plus attribute editing and printing.

Printing reproduces the source text byte for byte; an edited op only has its attribute
dictionary re-spelled, so a diff of the output against the input shows exactly the edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from . import attributes as attrs_mod
from .attributes import Attribute
from .errors import EditError
from .types import Type


@dataclass(eq=False)
class Value:
    """An SSA value: an op result or a block argument."""

    name: str  # as spelled at uses, e.g. "%acc", "%acc_16#1"
    type: Type
    owner: Op | Block
    index: int
    uses: list[Use] = field(default_factory=list, repr=False)

    @property
    def defining_op(self) -> Op | None:
        return self.owner if isinstance(self.owner, Op) else None

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.type.text})"


@dataclass(frozen=True, slots=True)
class Use:
    op: Op
    operand_index: int


@dataclass(eq=False)
class Block:
    label: str  # "" for an entry block without a printed label
    arguments: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    parent: Region | None = field(default=None, repr=False)


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)
    parent: Op | None = field(default=None, repr=False)

    @property
    def ops(self) -> list[Op]:
        return [op for block in self.blocks for op in block.ops]


@dataclass(eq=False)
class AttrSyntax:
    """Where the op's attribute dictionary is, or where a new one would go."""

    span: tuple[int, int] | None  # offsets of `{...}` (or `attributes {...}`) when present
    insert_at: int  # offset to insert " {...}" when there is none
    keyword: bool  # printed as `attributes {...}`


@dataclass(eq=False)
class Op:
    name: str
    results: list[Value] = field(default_factory=list)
    operands: list[Value] = field(default_factory=list)
    attributes: dict[str, Attribute] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    parent: Block | None = field(default=None, repr=False)
    location: str = ""  # the op's `loc(...)` text
    line: int = 0  # position of the op in the TTGIR text
    column: int = 0
    generic: bool = False  # printed as "dialect.op"(...)
    symbol: str = ""  # the op's own @symbol, e.g. a function's name (without "@")
    _attr_syntax: AttrSyntax | None = field(default=None, repr=False)
    _edited: bool = field(default=False, repr=False)

    @property
    def parent_op(self) -> Op | None:
        region = self.parent.parent if self.parent else None
        return region.parent if region else None

    @property
    def body(self) -> Block:
        """The entry block of the first region (loops, functions, modules)."""
        return self.regions[0].blocks[0]

    def walk(self) -> Iterator[Op]:
        """This op, then every op nested in its regions, in textual order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    def ancestors(self) -> Iterator[Op]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def attr(self, name: str, default: Any = None) -> Any:
        """Parsed value of an attribute (True for unit), or `default` if absent."""
        a = self.attributes.get(name)
        return default if a is None else a.value

    def has_attr(self, name: str) -> bool:
        return name in self.attributes

    def set_attr(self, name: str, raw: str | None) -> None:
        """Set attribute `name` to `raw` text (None for a unit attribute)."""
        if self._attr_syntax is None:
            raise EditError(f"'{self.name}' at line {self.line}: attributes cannot be edited")
        if self._attr_syntax.span is None and self._attr_syntax.insert_at < 0:
            raise EditError(f"'{self.name}' at line {self.line}: no place for attributes")
        new = Attribute(name, raw)
        if self.attributes.get(name) == new:
            return
        if name not in self.attributes:
            # MLIR prints dictionaries sorted by name; keep that order for new entries.
            items = sorted([*self.attributes.values(), new], key=lambda a: a.name)
            self.attributes = {a.name: a for a in items}
        else:
            self.attributes[name] = new
        self._edited = True

    def remove_attr(self, name: str) -> None:
        if name in self.attributes:
            del self.attributes[name]
            self._edited = True

    def __repr__(self) -> str:
        return f"Op({self.name} @ line {self.line})"


@dataclass(eq=False)
class Module:
    """A parsed TTGIR file. `ops` are the top-level ops (normally one `module`)."""

    text: str
    ops: list[Op]
    aliases: dict[str, str]  # "#blocked" -> "#ttg.blocked<{...}>", "#loc3" -> "loc(...)"

    def walk(self) -> Iterator[Op]:
        for op in self.ops:
            yield from op.walk()

    def source_location(self, op: Op) -> str:
        """The Python source position of an op ("file:line:col"), following #loc aliases."""
        return resolve_location(op.location, self.aliases)

    def print(self) -> str:
        edits = sorted(
            (_dictionary_edit(op) for op in self.walk() if op._edited),
            key=lambda e: e[0],
        )
        out, pos = [], 0
        for start, end, replacement in edits:
            out.append(self.text[pos:start])
            out.append(replacement)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)


def _dictionary_edit(op: Op) -> tuple[int, int, str]:
    syntax = op._attr_syntax
    assert syntax is not None
    body = attrs_mod.print_dictionary(list(op.attributes.values()))
    if syntax.keyword:
        body = "attributes " + body
    if syntax.span is not None:
        start, end = syntax.span
        if not op.attributes:
            return start - 1, end, ""  # also drop the space before the dictionary
        return start, end, body
    if not op.attributes:
        return syntax.insert_at, syntax.insert_at, ""
    return syntax.insert_at, syntax.insert_at, " " + body


def resolve_location(loc: str, aliases: dict[str, str], depth: int = 0) -> str:
    """Best-effort `file:line:col` for a `loc(...)` text; "" when there is none."""
    if depth > 32 or not loc:
        return ""
    m = re.search(r'"([^"]*)":([0-9]+):([0-9]+)', loc)
    if m:
        return f"{m.group(1)}:{m.group(2)}:{m.group(3)}"
    for ref in re.findall(r"#loc[0-9]*", loc):
        found = resolve_location(aliases.get(ref, ""), aliases, depth + 1)
        if found:
            return found
    return ""

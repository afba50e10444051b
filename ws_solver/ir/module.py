"""The parsed module: ops, values, regions and blocks, plus attribute editing and printing.

Printing reproduces the source text byte for byte; an edited op only has its attribute
dictionary re-spelled, so a diff of the output against the input shows exactly the edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from . import attributes as attrs_mod
from .attributes import Attribute
from .errors import EditError
from .types import Type

_VALUE_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+(?:#[0-9]+)?")


class _Nothing(list):
    """The one empty list that ops and values with no results, operands, regions or uses
    share (a large module has many); it refuses changes: assign a new list instead."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a shared empty list: assign a new list instead")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


_NOTHING = _Nothing()
_NO_ATTRIBUTES: Mapping[str, Attribute] = MappingProxyType({})


def nothing() -> list:
    """The shared empty list (a default that allocates nothing)."""
    return _NOTHING


def _no_attributes() -> Any:
    return _NO_ATTRIBUTES


@dataclass(eq=False, slots=True)
class Value:
    """An SSA value: an op result or a block argument."""

    name: str  # as spelled at uses, e.g. "%acc", "%acc_16#1"
    type: Type
    owner: Op | Block
    index: int
    uses: list[Use] = field(default_factory=nothing, repr=False)

    @property
    def defining_op(self) -> Op | None:
        return self.owner if isinstance(self.owner, Op) else None

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.type.text})"


@dataclass(frozen=True, slots=True)
class Use:
    op: Op
    operand_index: int
    # Offset of the `%name` token of this operand in the text (-1: none); where, not what.
    start: int = field(default=-1, compare=False)


@dataclass(eq=False, slots=True)
class Block:
    label: str  # "" for an entry block without a printed label
    arguments: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    parent: Region | None = field(default=None, repr=False)


@dataclass(eq=False, slots=True)
class Region:
    blocks: list[Block] = field(default_factory=list)
    parent: Op | None = field(default=None, repr=False)

    @property
    def ops(self) -> list[Op]:
        return [op for block in self.blocks for op in block.ops]


@dataclass(eq=False, slots=True)
class AttrSyntax:
    """Where the op's attribute dictionary is, or where a new one would go."""

    span: tuple[int, int] | None  # offsets of `{...}` (or `attributes {...}`) when present
    insert_at: int  # offset to insert " {...}" when there is none
    keyword: bool  # printed as `attributes {...}`


@dataclass(eq=False, slots=True)
class Op:
    name: str
    results: list[Value] = field(default_factory=nothing)
    operands: list[Value] = field(default_factory=nothing)
    attributes: dict[str, Attribute] = field(default_factory=_no_attributes)
    regions: list[Region] = field(default_factory=nothing)
    parent: Block | None = field(default=None, repr=False)
    location: str = ""  # the op's `loc(...)` text
    line: int = 0  # position of the op in the TTGIR text
    column: int = 0
    generic: bool = False  # printed as "dialect.op"(...)
    symbol: str = ""  # the op's own @symbol, e.g. a function's name (without "@")
    # Where the attribute dictionary is (`AttrSyntax`, kept as plain fields: a large module
    # has one per op). _attr_at: -2 when attributes cannot be edited.
    _attr_start: int = field(default=-1, repr=False)
    _attr_end: int = field(default=-1, repr=False)
    _attr_at: int = field(default=-2, repr=False)
    _attr_keyword: bool = field(default=False, repr=False)
    _edited: bool = field(default=False, repr=False)
    # Offsets of the op's text (first token to last, regions included): what the text-level
    # rewrites splice (operands: `Use.start`). -1: not from a text.
    _start: int = field(default=-1, repr=False)
    _end: int = field(default=-1, repr=False)

    @property
    def _attr_syntax(self) -> AttrSyntax | None:
        if self._attr_at == -2:
            return None
        span = None if self._attr_start < 0 else (self._attr_start, self._attr_end)
        return AttrSyntax(span, self._attr_at, self._attr_keyword)

    def _set_attr_syntax(self, syntax: AttrSyntax) -> None:
        self._attr_start, self._attr_end = syntax.span or (-1, -1)
        self._attr_at, self._attr_keyword = syntax.insert_at, syntax.keyword

    @property
    def _span(self) -> tuple[int, int] | None:
        return None if self._start < 0 else (self._start, self._end)

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
        # A new dictionary, never the old one changed: a caller may keep the old one to put
        # back (the drop-in plans on one parse more than once).
        if name not in self.attributes:
            # MLIR prints dictionaries sorted by name; keep that order for new entries.
            items = sorted([*self.attributes.values(), new], key=lambda a: a.name)
            self.attributes = {a.name: a for a in items}
        else:
            self.attributes = {**self.attributes, name: new}
        self._edited = True

    def remove_attr(self, name: str) -> None:
        if name in self.attributes:
            self.attributes = {n: a for n, a in self.attributes.items() if n != name}
            self._edited = True

    def __repr__(self) -> str:
        return f"Op({self.name} @ line {self.line})"


@dataclass(eq=False, slots=True)
class Module:
    """A parsed TTGIR file. `ops` are the top-level ops (normally one `module`)."""

    text: str
    ops: list[Op]
    aliases: dict[str, str]  # "#blocked" -> "#ttg.blocked<{...}>", "#loc3" -> "loc(...)"
    # Text-level rewrites, (start, end, replacement) in the order they were asked for.
    _splices: list[tuple[int, int, str]] = field(default_factory=list, repr=False)
    _reserved: set[str] = field(default_factory=set, repr=False)

    def walk(self) -> Iterator[Op]:
        for op in self.ops:
            yield from op.walk()

    def source_location(self, op: Op) -> str:
        """The Python source position of an op ("file:line:col"), following #loc aliases."""
        return resolve_location(op.location, self.aliases)

    # -- text-level rewrites ---------------------------------------------------------------
    # New ops are written as text: the printer splices them in; re-parse the printed text
    # to see them as ops. Each inserted line gets the indentation of the op it is placed by.

    def insert_before(self, op: Op, text: str) -> None:
        """Insert the lines of `text` (ops, unindented) on their own lines before `op`."""
        start, _ = self._op_span(op)
        line_start = self.text.rfind("\n", 0, start) + 1
        self._splices.append((line_start, line_start, self._indent_lines(op, text)))

    def insert_after(self, op: Op, text: str) -> None:
        """Insert the lines of `text` on their own lines after `op` (after its regions)."""
        _, end = self._op_span(op)
        newline = self.text.find("\n", end)
        at = len(self.text) if newline < 0 else newline + 1
        lines = self._indent_lines(op, text)
        if newline < 0:
            lines = "\n" + lines.removesuffix("\n")
        self._splices.append((at, at, lines))

    def erase(self, op: Op) -> None:
        """Delete `op` (its whole lines, regions included); its results must be unused."""
        replaced = {(s, e) for s, e, _ in self._splices}
        used = [u for r in op.results for u in r.uses if self._use_span(u) not in replaced]
        if used:
            raise EditError(
                f"'{op.name}' at line {op.line}: results still used at line {used[0].op.line}"
            )
        self._remove_lines(op)

    def move_before(self, op: Op, anchor: Op, text: str | None = None) -> None:
        """Move `op`'s lines (or `text` in their place) to just before `anchor`.

        Its results keep their names; that `anchor` still precedes every use of them, and
        dominates them, is the caller's to ensure.
        """
        if op is anchor:
            raise EditError(f"'{op.name}' at line {op.line} cannot move before itself")
        moved = self.op_text(op) if text is None else text
        self._remove_lines(op)  # checks the op starts its line before anything is spliced
        self.insert_before(anchor, moved)

    def _remove_lines(self, op: Op) -> None:
        """Splice out the whole lines of `op` (regions included)."""
        start, end = self._op_span(op)
        line_start = self.text.rfind("\n", 0, start) + 1
        if self.text[line_start:start].strip():
            raise EditError(f"'{op.name}' at line {op.line} does not start its line")
        newline = self.text.find("\n", end)
        self._splices.append((line_start, len(self.text) if newline < 0 else newline + 1, ""))

    def op_text(self, op: Op) -> str:
        """The op's text (first token to last, regions included) as in the source, with the
        attribute edits of the op and of the ops in its regions: moved or copied, it keeps
        them."""
        start, end = self._op_span(op)
        edits = sorted(_dictionary_edit(inner) for inner in op.walk() if inner._edited)
        out, pos = [], start
        for edit_start, edit_end, replacement in edits:
            out += [self.text[pos:edit_start], replacement]
            pos = edit_end
        return "".join(out) + self.text[pos:end]

    @property
    def spliced(self) -> bool:
        """Whether text was inserted, moved or erased: the ops then no longer show what
        print() gives (parse that to see them); attribute edits show at once."""
        return bool(self._splices)

    def replace_operand(self, op: Op, index: int, value_name: str) -> None:
        """Make operand `index` of `op` read `value_name` (e.g. "%x", "%r#1") instead."""
        if not 0 <= index < len(op.operands):
            raise EditError(f"'{op.name}' at line {op.line} has no operand {index}")
        if not _VALUE_NAME.fullmatch(value_name):
            raise EditError(f"not a value name: {value_name!r}")
        use = next(u for u in op.operands[index].uses if u.op is op and u.operand_index == index)
        self._splices.append((*self._use_span(use), value_name))

    def _use_span(self, use: Use) -> tuple[int, int]:
        """Offsets of the `%name` token of one operand."""
        found = _VALUE_NAME.match(self.text, use.start) if use.start >= 0 else None
        if found is None:
            raise EditError(f"'{use.op.name}' at line {use.op.line}: operand not in the text")
        return found.span()

    def fresh_name(self, prefix: str = "v") -> str:
        """A `%prefix_N` value name defined nowhere in the module and not handed out before."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
            raise EditError(f"not a value-name prefix: {prefix!r}")
        if not self._reserved:
            self._reserved.update(re.findall(r"%[A-Za-z0-9_$.\-]+", self.text))
        n = 0
        while f"%{prefix}_{n}" in self._reserved:
            n += 1
        name = f"%{prefix}_{n}"
        self._reserved.add(name)
        return name

    def _op_span(self, op: Op) -> tuple[int, int]:
        if op._span is None:
            raise EditError(f"'{op.name}' at line {op.line}: no source position recorded")
        return op._span

    def _indent_lines(self, op: Op, text: str) -> str:
        start, _ = self._op_span(op)
        line_start = self.text.rfind("\n", 0, start) + 1
        indent = self.text[line_start:start]
        if indent.strip():
            indent = " " * len(indent)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return "".join(f"{indent}{ln.strip()}\n" for ln in lines)

    def print(self) -> str:
        return self._printed(())

    def _printed(self, inserts: list[tuple[int, str]] | tuple) -> str:
        """The text with its edits; `inserts` (offset, text): more insertions, each after
        the edits at its offset."""
        dictionaries = [_dictionary_edit(op) for op in self.walk() if op._edited]
        # By position; at one position, insertions (in request order) before replacements.
        edits = sorted(
            [(s, e > s, 0, k, e, r) for k, (s, e, r) in enumerate(dictionaries)]
            + [(s, e > s, 1, k, e, r) for k, (s, e, r) in enumerate(self._splices)]
            + [(s, False, 2, k, s, r) for k, (s, r) in enumerate(inserts)],
        )
        erased = [(s, e) for s, _, _, _, e, r in edits if not r and e > s]
        out, pos = [], 0
        for start, _, _, _, end, replacement in edits:
            if start < pos:
                if any(s <= start and end <= e for s, e in erased):
                    continue  # inside an erased op
                raise EditError(f"overlapping edits at offset {start}")
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


def located_text(module: Module) -> str:
    """The module's text (`print()`, attribute edits included) with a location on every op
    that has none: the location of the nearest op before it in its block that has one, else
    of its nearest enclosing op that has one (ops without any keep none). MLIR's parser
    places an op without a location at its line and column in the file parsed, which for
    text parsed through a temporary file leaks that file's path into the compiled TTGIR;
    this keeps the user's own locations. Ops inserted as text have no op yet: a module with
    splices is refused (parse its print first)."""
    if module.spliced:
        raise EditError("located_text of a module with text edits: parse its print() first")
    inserts: list[tuple[int, str]] = []
    for op in module.walk():
        if op.location or op._span is None or op.parent is None:
            continue
        location = _borrowed_location(op)
        if location:
            inserts.append((op._end, f" {location}"))
    return module._printed(inserts)


def _borrowed_location(op: Op) -> str:
    ops = op.parent.ops
    for before in reversed(ops[: ops.index(op)]):
        if before.location:
            return before.location
    return next((a.location for a in op.ancestors() if a.location), "")

"""TTGIR text → Module. A recursive-descent reader over tokens that keeps byte offsets.

It understands MLIR's generic structure (results, op name, operands, attribute dictionary,
regions, blocks, block arguments, locations) without knowing each op's custom grammar: an
op's own tokens are classified by shape (`%x =` and `%x: T` inside parentheses define block
arguments of the op's next region; other `%x` are operands).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

from . import syntax
from .attributes import parse_dictionary
from .errors import ParseError
from .lexer import (
    BANG,
    BLOCK,
    EOL,
    HASH,
    IDENT,
    KIND_CODES,
    NUMBER,
    PUNCT,
    RESOURCE_CLOSE,
    RESOURCE_OPEN,
    STRING,
    SYMBOL,
    VALUE,
    SourceMap,
    Token,
    tokenize,
)
from .module import AttrSyntax, Block, Module, Op, Region, Use, Value
from .types import UNKNOWN, parse_type, split_top_level

_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_OPENERS = set(_CLOSERS)
_CLOSING = set(_CLOSERS.values())
# Regions nest by recursion (two frames a level); deeper input is an error, not RecursionError.
_MAX_REGION_DEPTH = 100
_MAX_RESULT_COUNT_DIGITS = 4  # `%r:N` with N up to 9999
# The packed kind codes (lexer.Tokens.codes) of `#name` tokens, with and without end of line.
_LOCATION_ALIAS = re.compile(r"#loc[0-9]*")
_ALIAS_START_CODES = bytes(
    [KIND_CODES[HASH], KIND_CODES[HASH] | EOL, KIND_CODES[BANG], KIND_CODES[BANG] | EOL]
)
# A token that ends its line, then a `#name` or `!name`: a line that may define an alias.
_ALIAS_LINE = re.compile(b"[\x80-\xff][" + re.escape(_ALIAS_START_CODES) + b"]")
_HASH_CODES = re.compile(b"[" + re.escape(bytes([KIND_CODES[HASH], KIND_CODES[HASH] | EOL])) + b"]")


def parse(text: str) -> Module:
    """Parse TTGIR as Triton 3.6.0 prints it; malformed input raises ParseError."""
    if not isinstance(text, str):
        raise ParseError("input is not text", 1, 1)
    return _Parser(text).module()


@dataclass(slots=True)
class _OwnToken:
    """A token of the op itself (not inside its attribute dictionary or regions)."""

    token: Token
    depth: int
    after_region: bool  # some region of the op closed before this token


@dataclass(slots=True)
class _PendingArg:
    name: str
    token: Token
    type_text: str | None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.source = SourceMap(text)
        self.tokens = tokenize(text, self.source)
        self.count = len(self.tokens)
        self.i = 0
        self.aliases: dict[str, str] = {}
        # Per region, name -> its value (a list for an op's several results).
        self.scopes: dict[Region, dict[str, Value | list[Value]]] = {}
        # Uses are resolved at the end (values may be used before their definition): the
        # op and the token index of each, in two flat lists.
        self.use_ops: list[Op] = []
        self.use_tokens = array("q")
        # One object for equal strings, types and attributes: a large module repeats them.
        self.shared: dict[object, object] = {}
        self.depth = 0  # regions open

    # -- token stream -------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < self.count else None

    def next(self, context: str) -> Token:
        i = self.i
        if i >= self.count:
            raise self.source.error(f"unexpected end of input {context}", len(self.text))
        self.i = i + 1
        return self.tokens[i]

    def expect(self, text: str, context: str) -> Token:
        tok = self.next(context)
        if tok.text != text:
            raise self.error(f"expected '{text}' {context}, found '{tok.text}'", tok)
        return tok

    def error(self, reason: str, tok: Token) -> ParseError:
        return self.source.error(reason, tok.start)

    def is_punct(self, tok: Token | None, text: str) -> bool:
        return tok is not None and tok.kind == PUNCT and tok.text == text

    def skip_balanced(self, opener: Token, context: str) -> Token:
        """Consume up to the bracket matching `opener` (already consumed) on the same line."""
        stack, tok = [opener], opener
        while not tok.eol:
            tok = self.next(context)
            if tok.kind == PUNCT and tok.text in _OPENERS:
                stack.append(tok)
            elif tok.kind == PUNCT and tok.text in _CLOSING:
                if _CLOSERS[stack[-1].text] != tok.text:
                    raise self.error(f"unbalanced '{tok.text}' {context}", tok)
                stack.pop()
                if not stack:
                    return tok
            elif tok.kind in (RESOURCE_OPEN, RESOURCE_CLOSE):
                raise self.error(f"unexpected '{tok.text}' {context}", tok)
        raise self.error(f"unclosed '{stack[-1].text}' {context}", stack[-1])

    def type_text_at(self, j: int) -> tuple[str, int]:
        """Text of the type starting at token j, up to `,` `)` `loc` or `{` outside brackets."""
        depth, start = 0, j
        while j < self.count:
            tok = self.tokens[j]
            if depth == 0 and (
                (tok.kind == PUNCT and tok.text in (",", ")", "{"))
                or (tok.kind == IDENT and tok.text == "loc")
            ):
                break
            if tok.kind == PUNCT and tok.text in _OPENERS:
                depth += 1
            elif tok.kind == PUNCT and tok.text in _CLOSING:
                depth -= 1
                if depth < 0:
                    break
            j += 1
        if j == start:
            where = self.tokens[j] if j < self.count else self.tokens[-1]
            raise self.error("expected a type", where)
        return self.text[self.tokens[start].start : self.tokens[j - 1].end], j

    # -- module -------------------------------------------------------------------------
    def module(self) -> Module:
        self.read_aliases()
        self.check_alias_uses()
        region = Region()
        self.scopes[region] = {}
        block = Block("", parent=region)
        region.blocks.append(block)
        while self.i < self.count:
            tok = self.tokens[self.i]
            if tok.kind in (HASH, BANG) and self.is_punct(self.peek(1), "="):
                self.skip_line()  # read_aliases read it
            elif tok.kind == RESOURCE_OPEN:
                self.skip_resources()
            else:
                self.operation(block)
        self.resolve_uses()
        return Module(self.text, block.ops, self.aliases)

    def read_aliases(self) -> None:
        """Read the alias definitions (`#name = ...`, `!name = ...`, each on a line of its
        own) before any op: a truncated file, which loses its trailing location aliases
        first, fails before the ops are parsed."""
        for start in reversed(self.alias_lines()):  # the last first: where a file is cut
            self.i = start
            self.alias_definition()
        self.i = 0

    def alias_lines(self) -> list[int]:
        """Index of the first token of each line that defines an alias."""
        codes = self.tokens.codes
        starts = [0] if codes and codes[0] in _ALIAS_START_CODES else []
        starts += [found.start() + 1 for found in _ALIAS_LINE.finditer(codes)]
        return [i for i in starts if i + 1 < self.count and self.tokens[i + 1].text == "="]

    def skip_line(self) -> None:
        codes = self.tokens.codes
        while self.i < self.count and codes[self.i] < EOL:
            self.i += 1
        self.i += 1

    def alias_definition(self) -> None:
        name = self.next("in alias")
        self.next("in alias")  # '='
        context = f"in definition of {name.text}"
        first = self.next(context)
        last = first
        if _LOCATION_ALIAS.fullmatch(name.text) and first.text != "loc":
            raise self.error(f"expected loc(...) {context}", first)
        if first.kind == IDENT and first.text == "loc":  # loc(...) and nothing after it
            last = self.skip_balanced(self.expect("(", f"after loc {context}"), context)
            if not last.eol:
                raise self.error(f"unexpected '{self.next(context).text}' {context}", last)
        elif first.kind == PUNCT and first.text in _OPENERS:
            last = self.skip_balanced(first, context)
        while not last.eol:
            last = self.next(context)
            if last.kind == PUNCT and last.text in _OPENERS:
                last = self.skip_balanced(last, context)
            elif last.kind == PUNCT and last.text in _CLOSING:
                raise self.error(f"unbalanced '{last.text}' {context}", last)
        if name.text in self.aliases:  # read last to first: name the later definition
            later = max(
                self.tokens[i].start for i in self.alias_lines() if self.tokens[i].text == name.text
            )
            raise self.source.error(f"redefinition of alias {name.text}", later)
        self.aliases[name.text] = self.text[first.start : last.end]

    def check_alias_uses(self) -> None:
        """Every location alias used (`#loc`, `#loc12`) is defined: MLIR prints them after
        the module, so a truncated file loses them first."""
        tokens = self.tokens
        for found in _HASH_CODES.finditer(tokens.codes):
            tok = tokens[found.start()]
            if tok.text not in self.aliases and _LOCATION_ALIAS.fullmatch(tok.text):
                raise self.error(f"undefined location alias {tok.text}", tok)

    def skip_resources(self) -> None:
        opener = self.next("in resource block")
        while True:
            tok = self.next(f"in resource block opened at line {self.line(opener)}")
            if tok.kind == RESOURCE_CLOSE:
                return

    def line(self, tok: Token) -> int:
        return self.source.position(tok.start)[0]

    # -- operations ---------------------------------------------------------------------
    def operation(self, block: Block) -> Op:
        first = self.peek()
        assert first is not None
        result_specs = self.result_list() if first.kind == VALUE else []
        name_tok = self.next("where an operation name was expected")
        if name_tok.kind == STRING and len(name_tok.text) > 2:
            name, generic = name_tok.text[1:-1], True
        elif name_tok.kind == IDENT:
            name, generic = name_tok.text, False
        else:
            raise self.error(f"expected an operation name, found '{name_tok.text}'", name_tok)
        line, column = self.source.position(first.start)
        op = Op(self.share(name), parent=block, line=line, column=column, generic=generic)
        block.ops.append(op)
        context = f"in '{name}' (line {line})"

        own: list[_OwnToken] = []
        stack: list[Token] = []  # open brackets of the op's own tokens
        pending: list[_PendingArg] = []
        region_args: list[list[Value]] = []
        dictionary: tuple[int, int, bool] | None = None
        after_region = False
        region_end = -1
        # Triton prints an op on one line (regions aside): its tokens end at the line's end,
        # except for multi-line formats, which end with a signature after their regions.
        ends_at_eol = name not in syntax.MULTILINE
        while not name_tok.eol:
            tok = self.next(context)
            kind, text = tok.kind, tok.text
            if kind == PUNCT and text == "{" and tok.eol:
                region_args.append(self.region(op, pending, context))
                pending = []
                after_region = True
                closing = self.tokens[self.i - 1]
                region_end = closing.end
                if closing.eol:
                    self.check_closed(stack, context)
                    if ends_at_eol:
                        break
                continue
            if kind == PUNCT and text == "{" and not stack:
                keyword = bool(own) and own[-1].token.kind == IDENT
                keyword = keyword and own[-1].token.text == "attributes"
                start = own.pop().token.start if keyword else tok.start
                close = self.skip_balanced(tok, context)
                if dictionary is not None:
                    raise self.error(f"second attribute dictionary {context}", tok)
                try:
                    attrs = parse_dictionary(self.text[tok.start + 1 : close.start])
                except ValueError as exc:
                    raise self.error(f"{exc} {context}", tok) from None
                op.attributes = {a.name: self.share(a) for a in attrs}
                dictionary = (start, close.end, keyword)
                if close.eol and ends_at_eol:
                    break
                continue
            if kind == IDENT and text == "loc" and not stack and self.is_punct(self.peek(), "("):
                close = self.skip_balanced(self.next(context), context)
                op.location = self.share(self.text[tok.start : close.end])
                break
            if kind == PUNCT and text in _OPENERS:
                stack.append(tok)
            elif kind == PUNCT and text in _CLOSING:
                if not stack or _CLOSERS[stack[-1].text] != text:
                    raise self.error(f"unbalanced '{text}' {context}", tok)
                stack.pop()
            elif kind == VALUE:
                self.value_token(op, tok, stack, pending)
            elif kind == SYMBOL and not op.symbol and not stack:
                op.symbol = text[1:].strip('"')
            elif kind in (RESOURCE_OPEN, RESOURCE_CLOSE):
                raise self.error(f"unexpected '{text}' {context}", tok)
            own.append(_OwnToken(tok, len(stack), after_region))
            if kind == PUNCT and text == ":" and after_region and not stack:
                ends_at_eol = True
            if tok.eol:
                self.check_closed(stack, context)
                if ends_at_eol:
                    break
        if pending:
            raise self.error(f"block arguments without a region {context}", pending[0].token)
        self.finish_operation(op, name_tok, result_specs, own, region_args, dictionary, region_end)
        op._start, op._end = first.start, self.tokens[self.i - 1].end
        return op

    def check_closed(self, stack: list[Token], context: str) -> None:
        if stack:
            raise self.error(f"unclosed '{stack[-1].text}' {context}", stack[-1])

    def result_list(self) -> list[tuple[Token, int]]:
        specs = []
        while True:
            tok = self.next("in result list")
            if tok.kind != VALUE or "#" in tok.text:
                raise self.error(f"expected a result name, found '{tok.text}'", tok)
            count = 1
            if self.is_punct(self.peek(), ":"):
                self.i += 1
                num = self.next("in result list")
                digits = num.kind == NUMBER and num.text.isdigit()
                if not digits or len(num.text) > _MAX_RESULT_COUNT_DIGITS or int(num.text) < 1:
                    raise self.error("expected a result count from 1 to 9999", num)
                count = int(num.text)
            specs.append((tok, count))
            sep = self.next("in result list")
            if sep.text == "=":
                return specs
            if sep.text != ",":
                raise self.error(f"expected ',' or '=' in result list, found '{sep.text}'", sep)

    def value_token(self, op: Op, tok: Token, stack: list[Token], pending: list) -> None:
        after = self.peek()
        if self.is_punct(after, "="):
            pending.append(_PendingArg(tok.text, tok, None))
        elif self.is_punct(after, ":") and stack and stack[-1].text == "(":
            type_text, _ = self.type_text_at(self.i + 1)
            pending.append(_PendingArg(tok.text, tok, type_text))
        else:
            self.use_ops.append(op)
            self.use_tokens.append(self.i - 1)

    # -- regions and blocks ---------------------------------------------------------------
    def region(self, op: Op, pending: list[_PendingArg], context: str) -> list[Value]:
        """Parse a region whose `{` was consumed; returns its entry arguments."""
        opener = self.tokens[self.i - 1]
        if self.depth == _MAX_REGION_DEPTH:
            raise self.error(f"regions nested more than {_MAX_REGION_DEPTH} deep {context}", opener)
        self.depth += 1
        region = Region(parent=op)
        op.regions = [*op.regions, region]
        self.scopes[region] = {}
        entry = Block("", parent=region)
        region.blocks.append(entry)
        for arg in pending:
            type_ = parse_type(arg.type_text, self.aliases) if arg.type_text else UNKNOWN
            self.define_block_argument(entry, arg.name, type_, arg.token)
        block = entry
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error(f"unclosed region {context}", opener)
            if self.is_punct(tok, "}"):
                self.i += 1
                break
            if tok.kind == BLOCK:
                fresh = block is entry and not entry.ops and not entry.arguments
                block = entry if fresh else Block("", parent=region)
                if not fresh:
                    region.blocks.append(block)
                self.block_label(block)
            else:
                self.operation(block)
        if not entry.ops and not entry.arguments and not entry.label and len(region.blocks) == 1:
            region.blocks.clear()
        self.depth -= 1
        return list(entry.arguments)

    def block_label(self, block: Block) -> None:
        label = self.next("in block label")
        block.label = label.text
        if self.is_punct(self.peek(), "("):
            self.i += 1
            while not self.is_punct(self.peek(), ")"):
                name = self.next("in block arguments")
                if name.kind != VALUE or "#" in name.text:
                    raise self.error(f"expected a block argument, found '{name.text}'", name)
                self.expect(":", "after block argument")
                type_text, self.i = self.type_text_at(self.i)
                if self.peek() is not None and self.peek().text == "loc":
                    self.i += 1
                    self.skip_balanced(self.expect("(", "after loc"), "in location")
                self.define_block_argument(
                    block, name.text, parse_type(type_text, self.aliases), name
                )
                if self.is_punct(self.peek(), ","):
                    self.i += 1
            self.i += 1
        self.expect(":", f"after block label {label.text}")

    def define_block_argument(self, block: Block, name: str, type_, tok: Token) -> None:
        value = Value(name, self.share(type_), block, len(block.arguments))
        block.arguments.append(value)
        self.define(block.parent, name, [value], tok)

    def define(self, region: Region | None, name: str, values: list[Value], tok: Token) -> None:
        scope = self.scopes[region]
        if name in scope:
            raise self.error(f"redefinition of value {name}", tok)
        scope[name] = values[0] if len(values) == 1 else values

    def share(self, item):
        """The one object equal to `item` (strings, types, attributes) in this module."""
        return self.shared.setdefault(item, item)

    # -- finishing an op ------------------------------------------------------------------
    def finish_operation(
        self, op, name_tok, result_specs, own, region_args, dictionary, region_end
    ) -> None:
        arrow, colon, to_type = self.signature(own)
        count = sum(c for _, c in result_specs)
        first_text = own[0].token.text if own else ""
        types = syntax.result_types(op.name, count, arrow, colon, to_type, first_text, self.aliases)
        types = [self.share(t) for t in types]
        index = 0
        for tok, n in result_specs:
            group = []
            for k in range(n):
                name = tok.text if n == 1 else f"{tok.text}#{k}"
                group.append(Value(name, types[index], op, index))
                index += 1
            op.results = [*op.results, *group]
            self.define(op.parent.parent, tok.text, group, tok)
        self.type_loop_arguments(op, region_args, colon)
        op._set_attr_syntax(self.attr_syntax(op, name_tok, own, dictionary, region_end))

    def type_loop_arguments(self, op: Op, region_args, colon: list[str]) -> None:
        """`scf.for %iv = ... iter_args(%a = %x)` print no types; take them from the op."""
        if op.name != "scf.for" or not region_args or not region_args[0]:
            return
        args = region_args[0]
        if args[0].type is UNKNOWN and colon:
            args[0].type = self.share(parse_type(colon[-1], self.aliases))
        for arg, result in zip(args[1:], op.results, strict=False):
            if arg.type is UNKNOWN:
                arg.type = result.type

    def signature(self, own: list[_OwnToken]) -> tuple[list[str] | None, list[str], str | None]:
        """(types after the last top-level `->`, types after the last top-level `:`, `to` T)."""
        top = [i for i, o in enumerate(own) if o.depth == 0]
        colons = [i for i in top if own[i].token.kind == PUNCT and own[i].token.text == ":"]
        arrows = [i for i in top if own[i].token.text == "->"]
        arrow = None
        if arrows:
            start = arrows[-1] + 1
            end = next((i for i in colons if i > start), len(own))
            arrow = self.type_list(own, start, end)
        colon: list[str] = []
        to_type = None
        if colons:
            start = colons[-1] + 1
            end = len(own)
            tos = [i for i in top if i > start and own[i].token.text == "to"]
            if tos:
                to_type = self.span_text(own, tos[0] + 1, end)
                end = tos[0]
            after_arrow = [i for i in arrows if i > start]
            colon = self.type_list(own, start, after_arrow[0] if after_arrow else end) or []
        return arrow, colon, to_type

    def type_list(self, own: list[_OwnToken], start: int, end: int) -> list[str] | None:
        text = self.span_text(own, start, end)
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        return split_top_level(text) if text else []

    def span_text(self, own: list[_OwnToken], start: int, end: int) -> str:
        # Tokens after a region belong to the trailing signature; stop at a region boundary.
        if start >= end:
            return ""
        j = start
        while j + 1 < end and own[j + 1].after_region == own[start].after_region:
            j += 1
        return self.text[own[start].token.start : own[j].token.end].strip()

    def attr_syntax(self, op: Op, name_tok: Token, own, dictionary, region_end) -> AttrSyntax:
        if dictionary is not None:
            start, end, keyword = dictionary
            return AttrSyntax((start, end), -1, keyword)
        if op.name in syntax.ATTR_DICT_KEYWORD:
            # `attributes {...}` ends the op's first line, before any region.
            header = name_tok
            for o in own:
                if o.after_region or header.eol:
                    break
                header = o.token
            return AttrSyntax(None, header.end, True)
        if op.name in syntax.ATTR_DICT_FIRST:
            return AttrSyntax(None, name_tok.end, False)
        if op.name in syntax.ATTR_DICT_KEYWORD_LAST:
            return AttrSyntax(None, region_end, True)
        for table, after in ((syntax.ATTR_DICT_BEFORE, False), (syntax.ATTR_DICT_AFTER, True)):
            if op.name in table:
                text, n = table[op.name]
                hits = [k for k, o in enumerate(own) if o.depth == 0 and o.token.text == text]
                if len(hits) >= n:
                    k = hits[n - 1] if after else hits[n - 1] - 1
                    return AttrSyntax(None, (own[k].token if k >= 0 else name_tok).end, False)
        # The dictionary follows the last region: `scf.if ... {...} else {...} {attrs}`.
        for k, o in enumerate(own):
            is_colon = o.depth == 0 and o.token.kind == PUNCT and o.token.text == ":"
            if is_colon and o.token.start > region_end:
                previous = own[k - 1].token if k > 0 else name_tok
                return AttrSyntax(None, max(previous.end, region_end), False)
        if op.regions:
            trailing = [o for o in own if o.token.start > region_end]
            return AttrSyntax(None, trailing[-1].token.end if trailing else region_end, False)
        return AttrSyntax(None, own[-1].token.end if own else name_tok.end, False)

    # -- uses -----------------------------------------------------------------------------
    def resolve_uses(self) -> None:
        for op, index in zip(self.use_ops, self.use_tokens, strict=True):
            tok = self.tokens[index]
            base, _, index_text = tok.text.partition("#")
            values = self.lookup(op, base)
            if values is None:
                raise self.error(f"use of undefined value {base}", tok)
            # len() first: int() refuses strings of over 4300 digits.
            if index_text and (len(index_text) > 9 or int(index_text) >= len(values)):
                raise self.error(f"{base} has {len(values)} results, no #{index_text}", tok)
            index = int(index_text) if index_text else 0
            value = values[index]
            if not value.uses:
                value.uses = []
            value.uses.append(Use(op, len(op.operands), tok.start))
            if not op.operands:
                op.operands = []
            op.operands.append(value)

    def lookup(self, op: Op, name: str) -> list[Value] | None:
        block = op.parent
        while block is not None:
            region = block.parent
            found = self.scopes[region].get(name)
            if found is not None:
                return found if isinstance(found, list) else [found]
            owner = region.parent
            block = owner.parent if owner is not None else None
        return None

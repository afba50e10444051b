"""Per-op facts about how Triton 3.6 prints ops: where attributes go, which types are results.

MLIR's custom assembly formats differ per op; these tables hold the exceptions to the common
shape `%r = name operands {attrs} : types`. They describe spelling only, not meaning.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .types import UNKNOWN, Type, parse_type, pointee, with_element

# Ops whose format prints the attribute dictionary right after the op name.
ATTR_DICT_FIRST = frozenset({"arith.constant", "scf.yield", "tt.return", "func.return"})

# Ops whose format prints the attribute dictionary next to their n-th top-level token t:
# before it (ATTR_DICT_BEFORE) or after it (ATTR_DICT_AFTER). Without that token, the
# dictionary goes where it does for other ops.
#   ttng.barrier_expect %bar, 16384 {attrs}, %pred : T
#   tt.fp_to_fp %x {attrs}, rounding = rtne : T -> U
#   scf.condition(%c) {attrs} %a : T
ATTR_DICT_BEFORE = {"ttng.barrier_expect": (",", 2), "tt.fp_to_fp": (",", 1)}
ATTR_DICT_AFTER = {"scf.condition": (")", 1)}

# Ops whose format prints `attributes {...}` after their last region: `} attributes {...}`.
ATTR_DICT_KEYWORD_LAST = frozenset({"scf.while"})

# Ops whose format prints attributes as `attributes {...}` before their regions.
ATTR_DICT_KEYWORD = frozenset(
    {"module", "builtin.module", "tt.func", "func.func", "ttg.warp_specialize"}
)

# Ops printed over several lines: `op(...) attributes {...}` / `default {...}` /
# `partition0(%a: T) num_warps(4) {...} : (T) -> ()`; they end after the signature.
MULTILINE = frozenset({"ttg.warp_specialize"})

# Ops whose every result is an async token that the format does not print.
TOKEN_RESULTS = frozenset(
    {
        "ttng.tmem_store",
        "ttng.tc_gen5_mma",
        "ttng.tc_gen5_mma_scaled",
        "ttg.async_copy_global_to_local",
        "ttg.async_commit_group",
        "ttg.async_wait",
    }
)

# Ops with an optional trailing async-token result after this many printed results.
OPTIONAL_TRAILING_TOKEN = {"ttng.tmem_load": 1}

COMPARISONS = frozenset({"arith.cmpi", "arith.cmpf"})

_TOKEN_TYPE = parse_type("!ttg.async.token")


def _exactly_count(found: Callable[..., list[Type]]) -> Callable[..., list[Type]]:
    """`found`, with a result of any other length than `count` replaced by `count` UNKNOWNs."""

    @functools.wraps(found)
    def types(name: str, count: int, *pieces: Any) -> list[Type]:
        result = found(name, count, *pieces)
        return result if len(result) == count else [UNKNOWN] * count

    return types


@_exactly_count
def result_types(
    name: str,
    count: int,
    arrow_types: list[str] | None,
    colon_types: list[str],
    to_type: str | None,
    first_operand_text: str,
    aliases: dict[str, str],
) -> list[Type]:
    """Result types of an op from the pieces of its printed signature; always `count` long."""
    if count == 0:
        return []
    if name in TOKEN_RESULTS:
        return [_TOKEN_TYPE] * count
    if name in OPTIONAL_TRAILING_TOKEN:
        printed = OPTIONAL_TRAILING_TOKEN[name]
        if count > printed:
            head = result_types("", printed, arrow_types, colon_types, to_type, "", aliases)
            return head + [_TOKEN_TYPE] * (count - printed)

    def parse(texts: list[str]) -> list[Type]:
        return [parse_type(t, aliases) for t in texts]

    if name in COMPARISONS and colon_types:
        return [with_element(parse_type(colon_types[0], aliases), "i1")] * count
    if name == "arith.constant" and not colon_types:
        return [parse_type("i1")] if first_operand_text in ("true", "false") else [UNKNOWN]
    if name == "tt.load" and colon_types:
        return [pointee(parse_type(colon_types[0], aliases))]
    if name == "tt.addptr" and colon_types:
        return parse(colon_types[:1])
    if arrow_types is not None:
        # one printed type for several results: `tt.split %x : T -> U` gives two U
        return parse(arrow_types) * count if len(arrow_types) == 1 else parse(arrow_types)
    if to_type is not None:
        return parse([to_type])
    if len(colon_types) == count:
        return parse(colon_types)
    if colon_types and count == 1:
        return parse(colon_types[-1:])
    if len(colon_types) == 1:
        return parse(colon_types) * count
    return []

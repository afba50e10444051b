"""Check a partitioner's output against the module it was given, before Triton lowers it.

A partitioner may only add partition annotations (``ws_solver.ir.annotate``) or take a loop's
``tt.warp_specialize`` tag off. Anything else (another kernel, a changed or missing op, a
changed operand, attribute or type, a loop left tagged but unannotated for Triton's own
partitioner to decide, text that does not parse) makes ``check_partitioned`` raise
``UntrustedResult``: the drop-in then counts the attempt as failed, with that reason, and
goes on with the next strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ... import ir
from ...ir.annotate import (
    ANNOTATIONS,
    OUTPUTS,
    PARTITION,
    STAGES,
    TAG,
    WARP_SPECIALIZE,
    without_annotations,
)
from ...model.dfg import ws_loops

_LOOP_MARKS = (PARTITION, STAGES, TAG)  # what a specialized loop carries besides its tag


class UntrustedResult(RuntimeError):
    """The partitioner's output is not its input plus partition annotations."""


@dataclass(frozen=True)
class Given:
    """What the check compares of the partitioner's input (`read` off its parse, which it
    leaves as it was: the drop-in parses the input once and plans on that parse too)."""

    text: str
    functions: list[str]
    names: list[str]  # each op's name, in walk order
    lines: list[int]
    tagged: frozenset[int]  # the ops tagged `tt.warp_specialize`, by walk index
    loops: list[int]  # the warp-specialized loops, by walk index
    plain: str  # `without_annotations`

    @classmethod
    def read(cls, module: ir.Module) -> Given:
        ops = list(module.walk())
        index = {id(op): i for i, op in enumerate(ops)}
        return cls(
            module.text,
            _functions(module),
            [op.name for op in ops],
            [op.line for op in ops],
            frozenset(i for i, op in enumerate(ops) if WARP_SPECIALIZE in op.attributes),
            [index[id(loop.op)] for loop in ws_loops(module)],
            without_annotations(module),
        )


@dataclass(frozen=True)
class Checked:
    """The check's outcome: per warp-specialized loop, whether the output specializes it;
    whether the output has every op located (`ir.located_text` leaves it as it is)."""

    specialized: list[bool]
    located: bool


def check_partitioned(given: str | Given, returned: str, reports: Sequence = ()) -> list[bool]:
    """Per warp-specialized loop of ``given``: whether ``returned`` specializes it.
    ``reports`` (the partitioner's per-loop reports, if any) must say the same.
    Raises UntrustedResult saying what differs."""
    if isinstance(given, str):
        given = Given.read(ir.parse(given))
    return check(given, returned, reports).specialized


def check(given: Given, returned: str, reports: Sequence = ()) -> Checked:
    """`check_partitioned` of the input read already, and whether the output is located."""
    try:
        after = ir.parse(returned)
    except ir.ParseError as e:
        raise UntrustedResult(f"the partitioner's output does not parse ({e})") from None
    functions = _functions(after)
    if given.functions != functions:
        raise UntrustedResult(
            f"the partitioner returned functions {functions}, it was given {given.functions}"
        )
    ops = list(after.walk())
    if given.names != [op.name for op in ops]:
        raise UntrustedResult(_first_difference(given.text, returned, "its ops differ"))
    for i, new in enumerate(ops):
        if WARP_SPECIALIZE in new.attributes and i not in given.tagged:
            raise UntrustedResult(
                f"the partitioner tagged '{new.name}' at line {given.lines[i]} {WARP_SPECIALIZE}"
            )
    loops = [ops[i] for i in given.loops]
    _check_annotated_only_in(loops, ops)
    specialized = [_loop_state(n, loop) for n, loop in enumerate(loops)]
    if reports:
        said = [bool(r.specialized) for r in reports]
        if said != specialized:
            raise UntrustedResult(
                f"the partitioner reported loops specialized as {said}, its output has "
                f"{specialized}"
            )
    located = ir.located_text(after) == returned
    plain = without_annotations(after)
    if given.plain != plain:
        raise UntrustedResult(
            _first_difference(given.plain, plain, "more than partition annotations")
        )
    return Checked(specialized, located)


def _functions(module: ir.Module) -> list[str]:
    return [op.symbol for op in module.walk() if op.name == "tt.func"]


def _first_difference(given: str, returned: str, what: str) -> str:
    """``what`` changed, naming the first line that differs."""
    old, new = given.splitlines(), returned.splitlines()
    line = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    shown = new[line].strip()[:100] if line < len(new) else "(the end of the text)"
    return f"the partitioner changed {what}: line {line + 1} is {shown!r}"


def _check_annotated_only_in(loops: list[ir.Op], ops: list[ir.Op]) -> None:
    """Partition annotations only on the warp-specialized loops and the ops inside them."""
    inside = {id(op) for loop in loops for op in loop.walk()}
    for op in ops:
        if id(op) not in inside and any(a in op.attributes for a in (PARTITION, OUTPUTS)):
            raise UntrustedResult(
                f"the partitioner annotated '{op.name}' at line {op.line}, outside the "
                "warp-specialized loops"
            )


def _loop_state(index: int, loop: ir.Op) -> bool:
    """True: the loop is annotated for Triton's lowering; False: its tag is off and nothing
    in it is annotated. Anything in between is an UntrustedResult."""
    nested = list(loop.walk())[1:]
    if WARP_SPECIALIZE not in loop.attributes:
        marked = [op for op in (loop, *nested) if op.attributes.keys() & set(ANNOTATIONS)]
        if marked:
            raise UntrustedResult(
                f"loop {index} lost its {WARP_SPECIALIZE} tag but keeps partition annotations"
            )
        return False
    missing = [name for name in _LOOP_MARKS if name not in loop.attributes]
    if len(missing) == len(_LOOP_MARKS):
        raise UntrustedResult(
            f"loop {index} was left tagged and unannotated, for Triton's own partitioner"
        )
    bare = next((op for op in nested if PARTITION not in op.attributes), None)
    if missing or bare is not None:
        what = f"no {', '.join(missing)}" if missing else f"'{bare.name}' at line {bare.line}"
        raise UntrustedResult(f"loop {index} is only partly annotated ({what})")
    _check_partition_ids(index, loop, nested)
    return True


def _check_partition_ids(index: int, loop: ir.Op, nested: list[ir.Op]) -> None:
    """Every partition id names one of the loop's partitions (Triton 3.6 rejects another id;
    3.9 silently schedules the loop itself, so the check is ours)."""
    count = len(loop.attr(STAGES) or ())
    for op in (loop, *nested):
        ids = set(op.attr(PARTITION) or ())
        ids.update(i for part in op.attr(OUTPUTS) or () for i in part)
        bad = sorted(i for i in ids if not 0 <= i < count)
        if bad:
            raise UntrustedResult(
                f"loop {index}: '{op.name}' at line {op.line} names partition {bad[0]}, "
                f"the loop has {count}"
            )

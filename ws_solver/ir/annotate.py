"""Write warp-specialization annotations onto a loop, as Triton 3.6's lowering reads them.

The contract (see triton-3.6-facts.md): `ttg.partition` on every op nested in the loop,
`ttg.partition.outputs` on nested region ops with results, and on the loop itself
`ttg.partition`, `ttg.partition.outputs`, `ttg.partition.stages` and
`ttg.warp_specialize.tag`. This module spells those attributes; what the partitions mean is
decided elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from .attributes import array_of, i32, i32_array
from .errors import EditError
from .module import Module, Op

PARTITION = "ttg.partition"
OUTPUTS = "ttg.partition.outputs"
STAGES = "ttg.partition.stages"
TAG = "ttg.warp_specialize.tag"
WARP_SPECIALIZE = "tt.warp_specialize"


@dataclass(frozen=True)
class LoopAnnotation:
    """Partition sets for one loop, indexed like `list(loop.walk())[1:]`."""

    op_partitions: tuple[tuple[int, ...], ...]
    op_outputs: dict[int, tuple[tuple[int, ...], ...]]  # op index -> per-result sets
    loop_partitions: tuple[int, ...]
    loop_outputs: tuple[tuple[int, ...], ...]
    stages: tuple[int, ...]
    tag: int


def annotate_loop(loop: Op, annotation: LoopAnnotation) -> None:
    """Set the annotations on `loop` and everything nested in it."""
    ops = list(loop.walk())[1:]
    if len(ops) != len(annotation.op_partitions):
        raise EditError(
            f"loop at line {loop.line} has {len(ops)} nested ops, "
            f"annotation has {len(annotation.op_partitions)}"
        )
    for index, (op, parts) in enumerate(zip(ops, annotation.op_partitions, strict=True)):
        if not parts:
            raise EditError(f"'{op.name}' at line {op.line} has no partition")
        op.set_attr(PARTITION, i32_array(parts))
        outputs = annotation.op_outputs.get(index)
        if outputs is not None:
            op.set_attr(OUTPUTS, array_of([i32_array(p) for p in outputs]))
    loop.set_attr(PARTITION, i32_array(annotation.loop_partitions))
    if annotation.loop_outputs:
        loop.set_attr(OUTPUTS, array_of([i32_array(p) for p in annotation.loop_outputs]))
    loop.set_attr(STAGES, array_of([i32(s) for s in annotation.stages]))
    loop.set_attr(TAG, i32(annotation.tag))


def clear_loop(loop: Op) -> None:
    """Remove `tt.warp_specialize` and any partition annotations: compile it unspecialized."""
    for op in loop.walk():
        for name in (PARTITION, OUTPUTS):
            op.remove_attr(name)
    for name in (WARP_SPECIALIZE, STAGES, TAG):
        loop.remove_attr(name)


ANNOTATIONS = (PARTITION, OUTPUTS, STAGES, TAG, WARP_SPECIALIZE)


def without_annotations(module: Module) -> str:
    """The module's text with every partition annotation and `tt.warp_specialize` tag taken
    off and every attribute dictionary spelled the same way: equal for two modules that
    differ in nothing else. `module` is left as it was."""
    saved = [(op, op.attributes, op._edited) for op in module.walk()]
    try:
        for op, attributes, _ in saved:
            if any(name in attributes for name in ANNOTATIONS):
                op.attributes = {n: a for n, a in attributes.items() if n not in ANNOTATIONS}
                op._edited = True
            if op._attr_syntax is not None and op.attributes:
                op._edited = True  # re-spelled, as the other module's will be
        return module.print()
    finally:
        for op, attributes, edited in saved:
            op.attributes, op._edited = attributes, edited

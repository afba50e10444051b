"""Plan → the per-op partition sets the annotation writer spells (no syntax here)."""

from __future__ import annotations

from ..ir.annotate import LoopAnnotation
from .graph import LoopGraph
from .kinds import NodeRole, op_traits
from .plan import Plan


def loop_annotation(graph: LoopGraph, plan: Plan, tag: int) -> LoopAnnotation:
    """Partition sets per nested op, per region result and for the loop itself."""
    n_ops = sum(1 for n in graph.nodes if n.role in (NodeRole.OP, NodeRole.TERMINATOR))
    op_parts: list[tuple[int, ...]] = [()] * n_ops
    outputs: dict[int, dict[int, tuple[int, ...]]] = {}
    loop_outputs: dict[int, tuple[int, ...]] = {}
    for node in graph.nodes:
        parts = plan.assignment[node.id]
        if node.role in (NodeRole.OP, NodeRole.TERMINATOR):
            op_parts[node.op_index] = parts
        elif node.op_index < 0:  # an iter arg of the warp-specialized loop itself
            loop_outputs[node.result_index] = parts
        else:  # iter arg of a nested loop or scf.if result: the owning op's output
            outputs.setdefault(node.op_index, {})[node.result_index] = parts
    # Results of nested region ops that are not value nodes (e.g. tt.reduce) run with the op.
    for node in graph.nodes:
        if node.role == NodeRole.OP and op_traits(node.op_name).combiner:
            count = len(node.label.split(", ")) if node.label != node.op_name else 0
            outputs[node.op_index] = dict.fromkeys(range(count), plan.assignment[node.id])
    used = tuple(p.id for p in plan.partitions)
    return LoopAnnotation(
        op_partitions=tuple(op_parts),
        op_outputs={i: tuple(o[k] for k in sorted(o)) for i, o in outputs.items()},
        loop_partitions=used,
        loop_outputs=tuple(loop_outputs[k] for k in sorted(loop_outputs)),
        stages=tuple(p.stage for p in plan.partitions),
        tag=tag,
    )


def annotated_assignment(
    graph: LoopGraph, annotation: LoopAnnotation
) -> tuple[tuple[int, ...], ...]:
    """The other way: per node id, the partition set an annotation gives it (what another
    partitioner wrote, read back onto `graph`). Value nodes read their owner's
    `ttg.partition.outputs` (the loop's for its own iter args); the loop body's terminator
    runs in every partition of the loop."""
    found: list[tuple[int, ...]] = []
    for node in graph.nodes:
        if node.role == NodeRole.TERMINATOR and node.parent is None:
            parts = annotation.loop_partitions
        elif node.role in (NodeRole.OP, NodeRole.TERMINATOR):
            parts = annotation.op_partitions[node.op_index]
        elif node.op_index < 0:
            parts = _nth(annotation.loop_outputs, node.result_index)
        else:
            parts = _nth(annotation.op_outputs.get(node.op_index, ()), node.result_index)
        found.append(tuple(sorted(parts)))
    return tuple(found)


def _nth(sets: tuple[tuple[int, ...], ...], index: int) -> tuple[int, ...]:
    return sets[index] if 0 <= index < len(sets) else ()

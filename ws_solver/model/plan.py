"""Plan: the answer for one loop — which partitions run each node, and with what resources."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cache

from .graph import LoopGraph
from .kinds import SCF_IF, NodeKind, NodeRole, op_traits

# Channel depths (pipeline stages of a cross-partition buffer) a plan may choose.
CHANNEL_DEPTHS = (1, 2, 3, 4)


@dataclass(frozen=True)
class Partition:
    id: int
    warps: int
    registers: int  # the partition's `setmaxnreg` value
    stage: int  # entry of `ttg.partition.stages`
    role: str = ""  # summary of what runs there, e.g. "load", "mma", "compute"


@dataclass(frozen=True)
class Channel:
    """One value of node `producer`, sent from partition `src` (which runs the producer) to
    partition `dst` (which runs a consumer of that value but not the producer)."""

    producer: int  # node id
    value: str  # the SSA value sent, as named on `Edge.value`
    src: int
    dst: int
    depth: int
    bytes: int  # per stage; 0 for a pure synchronisation (tokens)
    memory: str  # "shared", "tensor", or "" for a barrier-only hand-off


@dataclass(frozen=True)
class Merge:
    """One step of the heuristic: `rule` merged the partitions of nodes `src` and `dst`."""

    rule: str
    src: int
    dst: int


@dataclass(frozen=True)
class Plan:
    loop: str  # LoopGraph.name
    target: str  # Target.name
    assignment: tuple[tuple[int, ...], ...]  # per node id: sorted partition ids
    partitions: tuple[Partition, ...]
    channels: tuple[Channel, ...]
    strategy: str = ""
    merges: tuple[Merge, ...] = field(default=(), compare=False)

    @property
    def specialized(self) -> bool:
        """A plan with one partition means: do not warp-specialize this loop."""
        return len(self.partitions) > 1

    def partitions_of(self, node_id: int) -> tuple[int, ...]:
        return self.assignment[node_id]

    def nodes_in(self, partition: int) -> list[int]:
        return [n for n, parts in enumerate(self.assignment) if partition in parts]

    def channel_depth(self, producer: int, dst: int, value: str | None = None) -> int | None:
        """Depth of the channel of `producer`'s `value` into `dst` (any of its values when
        `value` is None: the deepest); None when there is no such channel."""
        depths = [
            c.depth
            for c in self.channels
            if c.producer == producer and c.dst == dst and value in (None, c.value)
        ]
        return max(depths, default=None)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["assignment"] = [list(p) for p in self.assignment]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_dict(d: dict) -> Plan:
        return Plan(
            loop=d["loop"],
            target=d["target"],
            assignment=tuple(tuple(p) for p in d["assignment"]),
            partitions=tuple(Partition(**p) for p in d["partitions"]),
            channels=tuple(Channel(**c) for c in d["channels"]),
            strategy=d.get("strategy", ""),
            merges=tuple(Merge(**m) for m in d.get("merges", ())),
        )


def is_duplicable(graph: LoopGraph, node_id: int) -> bool:
    """Cheap nodes that may run in several partitions instead of being communicated."""
    node = graph.nodes[node_id]
    if node.role == NodeRole.OP:
        # Not an op that writes memory: a second copy would write it twice.
        return node.kind in (NodeKind.SCALAR, NodeKind.VIEW) and not op_traits(node.op_name).writes
    return node.is_value and node.value_kind == "scalar"


def is_assignable(graph: LoopGraph, node_id: int) -> bool:
    """Nodes a strategy decides; the rest follow from them (see `complete_assignment`)."""
    node = graph.nodes[node_id]
    return node.role != NodeRole.TERMINATOR and not node.follows_parent and not _is_region(node)


def _is_region(node) -> bool:
    return node.role == NodeRole.OP and op_traits(node.op_name).region


def region_members(graph: LoopGraph, node_id: int) -> list[int]:
    """Nodes whose partitions a region op (`scf.if`, nested `scf.for`) must run in: its
    children, its value nodes (`scf.if` results; a nested loop's iter args are children),
    and the producers of the values its yields return (Triton 3.6: an op's `ttg.partition`
    contains its `ttg.partition.outputs`, and an `scf.if` that yields a value produced in a
    partition it does not run in cannot be lowered, e.g. an MMA's token yielded by an `else`).
    Sorted node ids."""
    return list(_region_members(graph, node_id))


@cache
def _region_members(graph: LoopGraph, node_id: int) -> tuple[int, ...]:
    node = graph.nodes[node_id]
    found = {c.id for c in graph.nodes if c.parent == node_id}
    if node.op_name == SCF_IF:
        values = {
            v.id
            for v in graph.nodes
            if v.role == NodeRole.IF_RESULT and v.op_index == node.op_index
        }
        found |= values
        found |= {e.src for v in values for e in graph.in_edges(v)}
    else:  # scf.for: the yield's operands reach the iter args through back edges
        found |= {
            e.src
            for c in graph.nodes
            if c.parent == node_id and c.role == NodeRole.ITER_ARG
            for e in graph.in_edges(c.id)
            if e.distance == 1 and e.carried_by == node_id
        }
    found.discard(node_id)
    return tuple(sorted(found))


def complete_assignment(
    graph: LoopGraph, decided: dict[int, tuple[int, ...]]
) -> tuple[tuple[int, ...], ...]:
    """Fill in region ops (the union over `region_members`), followers and terminators (their
    parent's; the loop body's own terminator runs in every partition)."""
    parts: dict[int, set[int]] = {n: set(p) for n, p in decided.items()}
    everything = set().union(*parts.values()) if parts else {0}
    # Children come after their region op in node order, so walk backwards for unions.
    for node in reversed(graph.nodes):
        if _is_region(node):
            kids = [k for k in region_members(graph, node.id) if k in parts]
            union = set().union(*(parts[k] for k in kids)) if kids else set()
            union |= set(decided.get(node.id, ()))
            parts[node.id] = union or {min(everything)}
    for node in graph.nodes:
        if node.role == NodeRole.TERMINATOR or node.follows_parent:
            parts[node.id] = set(everything) if node.parent is None else set(parts[node.parent])
    return tuple(tuple(sorted(parts.get(n.id, set()))) for n in graph.nodes)

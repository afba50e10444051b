"""What the merge rules need to know about one loop graph, computed once per (graph, target).

Nodes get bit flags (what kind of work they are); partitions carry the OR of their members'
flags, so every rule predicate is a few integer tests. "Data" nodes are the ones the merge
phase partitions: descriptor-load / pointer-LOAD results, `tmem_load` results, MMAs, and
everything reachable from them through edges of either distance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..model.graph import LoopGraph
from ..model.kinds import TMEM_LOAD as TMEM_LOAD_OP
from ..model.kinds import NodeKind, NodeRole, is_tma_load, op_traits
from ..model.plan import is_assignable
from ..model.target import Target
from ..model.traverse import descendants, load_feeds_mma, reaches_mma

# -- node flags --------------------------------------------------------------------------------
LOAD = 1 << 0  # descriptor (TMA) load/gather
STORE = 1 << 1
MMA = 1 << 2
MMA_REG = 1 << 3  # MMA whose accumulator lives in the issuing warp group's registers (wgmma)
TMEM = 1 << 4  # tensor-memory alloc/load/store/copy
SFU = 1 << 5
SFU_COSTLY = 1 << 6  # SFU op over more than COSTLY_SFU_ELEMENTS elements
STAGING = 1 << 7  # writes register data into shared/tensor memory (local_alloc, tmem_store, ...)
NOT_VIEW = 1 << 8  # anything that is not a pure view/layout op
NOT_STAGING = 1 << 9  # anything that is neither plain nor a staging write
LOAD_NO_MMA = 1 << 11  # a LOAD whose data never reaches an MMA
TMEM_LOAD = 1 << 12
NOT_ISSUE = 1 << 13  # work that needs threads: not a single-thread TMA / tcgen05 issue
TMEM_ALLOC = 1 << 14
LOAD_FEEDS_MMA = 1 << 15  # a LOAD whose data reaches an MMA
PTR_LOAD = 1 << 16  # a pointer load (tt.load, cp.async) of MMA operands: not a TMA producer
PTR_STAGING = 1 << 17  # a staging write of a pointer load's data into shared/tensor memory

SPECIAL = LOAD | STORE | MMA | TMEM | SFU  # a partition without these is "plain"

# exp2 over more than this many elements makes a partition SFU-bound ("costly").
COSTLY_SFU_ELEMENTS = 256
# An edge carrying more than this many elements is expensive to communicate.
LARGE_EDGE_ELEMENTS = 16_384


@dataclass(frozen=True)
class DataEdge:
    index: int  # position in graph.edges
    src: int
    dst: int
    distance: int
    value_kind: str
    elements: int


@dataclass(frozen=True)
class Facts:
    graph: LoopGraph
    target: Target
    flags: tuple[int, ...]  # per node id
    data: frozenset[int]  # assignable nodes partitioned by the merge phase
    assignable: frozenset[int]  # nodes a strategy decides (the rest follow, see plan.py)
    edges: tuple[DataEdge, ...]  # edges between two data nodes, in graph order
    consumers: tuple[tuple[int, ...], ...]  # per node: distinct data consumers (data nodes)
    producers: tuple[tuple[int, ...], ...]  # per node: distinct data producers
    view_in_elements: tuple[int, ...]  # per node: largest operand, in elements
    tensor_buffers: tuple[frozenset[str], ...]  # per node: tensor-memory allocations it touches
    feeds_mma: bool  # some LOAD's data reaches an MMA

    def is_view(self, n: int) -> bool:
        return not self.flags[n] & NOT_VIEW


def facts_for(graph: LoopGraph, target: Target) -> Facts:
    return _facts(graph, target)


@cache
def _facts(graph: LoopGraph, target: Target) -> Facts:
    nodes = graph.nodes
    mma_reached = reaches_mma(graph)
    flags = tuple(_node_flags(graph, target, n.id, mma_reached) for n in nodes)
    data = _data_nodes(graph)
    edges = tuple(
        DataEdge(i, e.src, e.dst, e.distance, e.value_kind, e.elements)
        for i, e in enumerate(graph.edges)
        if e.src in data and e.dst in data and e.src != e.dst
    )
    consumers: list[list[int]] = [[] for _ in nodes]
    producers: list[list[int]] = [[] for _ in nodes]
    for e in edges:
        if e.dst not in consumers[e.src]:
            consumers[e.src].append(e.dst)
        if e.src not in producers[e.dst]:
            producers[e.dst].append(e.src)
    view_in = tuple(
        max((e.elements for e in graph.in_edges(n.id)), default=n.elements) for n in nodes
    )
    tbufs = tuple(frozenset(b.name for b in n.buffers if b.memory == "tensor") for n in nodes)
    return Facts(
        graph=graph,
        target=target,
        flags=flags,
        data=data,
        assignable=frozenset(n.id for n in nodes if is_assignable(graph, n.id)),
        edges=edges,
        consumers=tuple(tuple(c) for c in consumers),
        producers=tuple(tuple(p) for p in producers),
        view_in_elements=view_in,
        tensor_buffers=tbufs,
        feeds_mma=load_feeds_mma(graph),
    )


def _node_flags(graph: LoopGraph, target: Target, node_id: int, reaches_mma) -> int:
    node = graph.nodes[node_id]
    if node.role != NodeRole.OP:  # value nodes and terminators are plain, and views of nothing
        flags = NOT_VIEW
        if node.value_kind not in ("scalar", "token", ""):
            flags |= NOT_ISSUE
        return flags
    kind, name = node.kind, node.op_name
    traits = op_traits(name)
    flags = 0
    if kind == NodeKind.LOAD and is_tma_load(name):
        flags |= LOAD | (LOAD_FEEDS_MMA if reaches_mma[node_id] else LOAD_NO_MMA)
    elif kind == NodeKind.LOAD:
        flags |= PTR_LOAD | NOT_ISSUE
    elif kind == NodeKind.STORE:
        flags |= STORE | NOT_ISSUE
    elif kind == NodeKind.MMA:
        flags |= MMA
        in_registers = (
            node.mma.accumulator_in_registers if node.mma else target.mma_accumulator_in_registers
        )
        if in_registers:
            flags |= MMA_REG | NOT_ISSUE
    elif kind == NodeKind.TMEM:
        flags |= TMEM | NOT_ISSUE
        if name == TMEM_LOAD_OP:
            flags |= TMEM_LOAD
        elif traits.allocates == "tensor":
            flags |= TMEM_ALLOC
    elif kind == NodeKind.SFU:
        flags |= SFU | NOT_ISSUE
        if node.elements > COSTLY_SFU_ELEMENTS:
            flags |= SFU_COSTLY
    elif kind in (NodeKind.NONE, NodeKind.REDUCE) and node.elements:
        flags |= NOT_ISSUE
    # Views for the view-chain rule: pure layout/shape changes. Allocations and stores into
    # shared memory are "staging" instead (they copy data), and loads from it are real moves.
    if kind != NodeKind.VIEW or traits.reads or traits.writes:
        flags |= NOT_VIEW
    registers_in = any(e.value_kind == "tensor" for e in graph.in_edges(node_id))
    if traits.from_registers and (registers_in or not traits.allocates):
        flags |= STAGING
        # Staging register data needs threads, unless it is a TMA load's landing buffer.
        sources = [graph.nodes[e.src] for e in graph.in_edges(node_id)]
        if not any(is_tma_load(s.op_name) for s in sources):
            flags |= NOT_ISSUE
        if any(s.kind == NodeKind.LOAD and not is_tma_load(s.op_name) for s in sources):
            flags |= PTR_STAGING
    elif flags & (LOAD | PTR_LOAD | STORE | MMA | SFU | TMEM):
        flags |= NOT_STAGING
    if kind == NodeKind.VIEW and any(e.value_kind == "tensor" for e in graph.out_edges(node_id)):
        flags |= NOT_ISSUE  # a view of register tensors runs on every thread that holds them
    return flags


def _data_nodes(graph: LoopGraph) -> frozenset[int]:
    sources = [
        n.id
        for n in graph.nodes
        if n.role == NodeRole.OP
        and (n.kind in (NodeKind.LOAD, NodeKind.MMA) or n.op_name == TMEM_LOAD_OP)
    ]
    return frozenset(n for n in descendants(graph, sources) if is_assignable(graph, n))

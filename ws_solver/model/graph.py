"""LoopGraph: the data-flow graph of one warp-specialized loop, as plain data.

Nodes are the loop body's ops (nested ones too), its loop-carried values and its `scf.if`
results; edges are def→use with an iteration distance. Nothing here knows MLIR syntax: the
builder (dfg.py) reads the parsed module, and `Node.op_index` ties a node back to its op
(position in the loop's walk order) for the annotation writer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from .kinds import NodeKind, NodeRole


@dataclass(frozen=True, slots=True)
class Buffer:
    """A shared- or tensor-memory allocation an op reads or writes."""

    name: str  # the allocating value's name, e.g. "%acc_13"
    memory: str  # "shared" or "tensor"
    bytes: int
    inside_loop: bool  # allocated by an op of this loop's body (else hoisted above it)
    elements: int = 0  # elements allocated (tensor memory: a narrow type may still take a cell)


@dataclass(frozen=True, slots=True)
class MmaShape:
    m: int
    n: int
    k: int
    operand_type: str  # element type of A/B, e.g. "f16"
    accumulator_in_registers: bool  # wgmma-style (sm_90) rather than tensor-memory (sm_100)

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k


@dataclass(frozen=True, slots=True)
class Node:
    id: int
    role: NodeRole
    kind: NodeKind
    op_name: str  # op name; for value nodes the name of the op that owns the value
    label: str  # result name(s) or op name, for people
    op_index: int  # position of the op in the loop's walk order (value nodes: owning op)
    result_index: int = -1  # value nodes: which result / iter arg
    parent: int | None = None  # node id of the enclosing region op inside the loop
    follows_parent: bool = False  # must run wherever its parent runs (reduce combiners)
    value_kind: str = ""  # value nodes: "tensor", "memdesc", "scalar", "token", ...
    elements: int = 0  # largest tensor result, in elements
    out_bytes: int = 0  # bytes of all results (tensor and memdesc)
    io_bytes: int = 0  # global-memory bytes moved (loads: result, stores: stored value)
    mma: MmaShape | None = None
    buffers: tuple[Buffer, ...] = ()
    stage: int | None = None  # loop.stage from Triton's software-pipeline schedule
    cluster: int | None = None
    line: int = 0  # line in the TTGIR text
    location: str = ""  # Python source position, when known

    @property
    def is_value(self) -> bool:
        return self.role in (NodeRole.ITER_ARG, NodeRole.IF_RESULT)


@dataclass(frozen=True, slots=True)
class Edge:
    src: int
    dst: int
    distance: int  # 0: same iteration; 1: through a loop back edge
    value: str  # the SSA value carried, as named in the IR
    value_kind: str  # "tensor", "memdesc", "scalar", "token", "other"
    bytes: int
    elements: int
    memory: str = ""  # memdesc only: "shared" or "tensor"
    carried_by: int | None = None  # distance-1 edges: loop node id (None: the WS loop)
    use: tuple[int, int] | None = None  # (op_index, operand_index) of the SSA use it models


@dataclass(frozen=True)
class LoopGraph:
    """One `scf.for` carrying `tt.warp_specialize`, with everything nested in it."""

    kernel: str  # function name
    loop_index: int  # position among the module's WS loops
    target: str  # the module's `ttg.target`, e.g. "cuda:90"
    num_warps: int  # the module's `ttg.num-warps`
    line: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    loop_buffers: tuple[Buffer, ...] = ()  # allocations used in the loop (hoisted ones too)
    scheduled_max_stage: int = 0
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def __hash__(self) -> int:
        # Computed once: cost tables are cached per graph, and hashing every node and edge
        # on each lookup dominated `evaluate` on small loops.
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(
                (
                    self.kernel,
                    self.loop_index,
                    self.target,
                    self.num_warps,
                    self.line,
                    self.nodes,
                    self.edges,
                    self.loop_buffers,
                    self.scheduled_max_stage,
                )
            )
            self.__dict__["_hash"] = cached
        return cached

    def __getstate__(self) -> dict:
        # String hashes differ between processes: a pickled graph recomputes its hash.
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @property
    def name(self) -> str:
        return f"{self.kernel}#loop{self.loop_index}"

    def node(self, node_id: int) -> Node:
        return self.nodes[node_id]

    @cached_property
    def nx(self) -> nx.MultiDiGraph:
        """The same graph as networkx, node attribute `node`, edge attribute `edge`."""
        g = nx.MultiDiGraph()
        for n in self.nodes:
            g.add_node(n.id, node=n)
        for e in self.edges:
            g.add_edge(e.src, e.dst, edge=e)
        return g

    def _edges_by(self, end: str) -> dict[int, list[Edge]]:
        """Each node's edges, by the node at their `end` ("src" or "dst"), in edge order."""
        found: dict[int, list[Edge]] = {n.id: [] for n in self.nodes}
        for e in self.edges:
            found[getattr(e, end)].append(e)
        return found

    @cached_property
    def _out_edges(self) -> dict[int, list[Edge]]:
        return self._edges_by("src")

    @cached_property
    def _in_edges(self) -> dict[int, list[Edge]]:
        return self._edges_by("dst")

    def out_edges(self, node_id: int) -> list[Edge]:
        return self._out_edges[node_id]

    def in_edges(self, node_id: int) -> list[Edge]:
        return self._in_edges[node_id]

    def children(self, node_id: int) -> list[Node]:
        return [n for n in self.nodes if n.parent == node_id]

    def ops(self) -> Iterator[Node]:
        return (n for n in self.nodes if n.role == NodeRole.OP)

    def of_kind(self, *kinds: NodeKind) -> list[Node]:
        return [n for n in self.nodes if n.kind in kinds and n.role == NodeRole.OP]

"""The problem: loop graphs, op kinds and hardware targets."""

from .dfg import WSLoop, build_graph, build_graphs, ws_loops
from .graph import Buffer, Edge, LoopGraph, MmaShape, Node
from .kinds import NodeKind, NodeRole, op_kind
from .target import SM90, SM100, TARGETS, Target, target_for

__all__ = [
    "SM90",
    "SM100",
    "TARGETS",
    "Buffer",
    "Edge",
    "LoopGraph",
    "MmaShape",
    "Node",
    "NodeKind",
    "NodeRole",
    "Target",
    "WSLoop",
    "build_graph",
    "build_graphs",
    "op_kind",
    "target_for",
    "ws_loops",
]

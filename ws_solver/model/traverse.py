"""Walks over a loop graph, in one place: what reaches what, and in which order."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from functools import cache

import networkx as nx

from .graph import LoopGraph
from .kinds import NodeKind, NodeRole


def reaches(
    succ: Mapping[int, Iterable[int]],
    start: int,
    found: Callable[[int], bool],
    through: Callable[[int], bool] = lambda n: True,
) -> bool:
    """Whether a walk from `start` along `succ` meets a node where `found` holds, passing only
    through nodes where `through` holds (breadth first)."""
    seen, queue = {start}, deque(succ.get(start, ()))
    while queue:
        n = queue.popleft()
        if n in seen:
            continue
        seen.add(n)
        if found(n):
            return True
        if through(n):
            queue.extend(succ.get(n, ()))
    return False


def successors(graph: LoopGraph, kind: str) -> dict[int, list[int]]:
    """Per node: the nodes its results of value kind `kind` feed in the same iteration (the
    `succ` of a `reaches` walk along one kind of value)."""
    return {
        n.id: [e.dst for e in graph.out_edges(n.id) if not e.distance and e.value_kind == kind]
        for n in graph.nodes
    }


def descendants(graph: LoopGraph, sources: Iterable[int]) -> frozenset[int]:
    """`sources` and every node their results reach, through edges of either distance."""
    return frozenset(_closure(sources, graph.out_edges, lambda e: e.dst))


@cache
def reaches_mma(graph: LoopGraph) -> tuple[bool, ...]:
    """Per node: whether its results reach an MMA op through edges of either distance."""
    mmas = [n.id for n in graph.of_kind(NodeKind.MMA)]
    reach = _closure(mmas, graph.in_edges, lambda e: e.src)
    return tuple(n.id in reach for n in graph.nodes)


def _closure(sources: Iterable[int], edges, end) -> set[int]:
    """`sources` and every node reached from them along `edges(n)` to `end(edge)`: one walk
    for all the sources, so linear in the graph."""
    found = set(sources)
    queue = deque(found)
    while queue:
        for e in edges(queue.popleft()):
            m = end(e)
            if m not in found:
                found.add(m)
                queue.append(m)
    return found


def load_feeds_mma(graph: LoopGraph) -> bool:
    """Whether there is anything to overlap: a load whose data reaches an MMA."""
    reach = reaches_mma(graph)
    return any(reach[n.id] for n in graph.of_kind(NodeKind.LOAD))


def same_iteration(graph: LoopGraph, nodes: Iterable[int] | None = None) -> nx.DiGraph:
    """The distance-0 edges among `nodes` (all when None), without self edges and edges into
    terminators: an acyclic graph, since SSA values are defined before their uses."""
    chosen = set(range(len(graph.nodes)) if nodes is None else nodes)
    g = nx.DiGraph()
    g.add_nodes_from(sorted(chosen))
    g.add_edges_from(
        (e.src, e.dst)
        for e in graph.edges
        if e.distance == 0
        and e.src != e.dst
        and e.src in chosen
        and e.dst in chosen
        and graph.nodes[e.dst].role != NodeRole.TERMINATOR
    )
    return g


def topological_order(graph: LoopGraph, nodes: Iterable[int] | None = None) -> list[int]:
    """`nodes` (all when None) with every distance-0 producer before its consumers; ties go
    to the lowest node id."""
    return list(nx.lexicographical_topological_sort(same_iteration(graph, nodes)))


def longest_paths(graph: LoopGraph, start: int, weight: Callable[[int], int]) -> dict[int, int]:
    """Per node reached from `start` through distance-0 edges: the heaviest path there, each
    node entered adding its `weight` (`start` itself: 0)."""
    order, succ = _forward(graph)
    best = {start: 0}
    for n in order:
        if n not in best:
            continue
        for m in succ[n]:
            best[m] = max(best.get(m, -1), best[n] + weight(m))
    return best


@cache
def _forward(graph: LoopGraph) -> tuple[tuple[int, ...], dict[int, tuple[int, ...]]]:
    """`same_iteration(graph)` as a topological order and successor lists, built once per
    graph (a loop has a recurrence per carried value, each walking it)."""
    dag = same_iteration(graph)
    return tuple(nx.topological_sort(dag)), {n: tuple(dag.successors(n)) for n in dag}

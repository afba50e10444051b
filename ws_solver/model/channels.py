"""The channels an assignment needs: one per value a partition uses without running its
producer."""

from __future__ import annotations

from .cost_table import CostTable
from .graph import LoopGraph
from .plan import Channel


def required_channels(
    graph: LoopGraph, assignment: tuple[tuple[int, ...], ...], table: CostTable
) -> list[tuple[int, str, int, int]]:
    """(producer, value, src partition, dst partition) for each partition that needs a value
    without running its producer; `src` is the producer's lowest partition."""
    found = []
    for (u, value), cost in table.values.items():
        here = set(assignment[u])
        if not here:
            continue
        needed = set().union(*(assignment[v] for v in cost.consumers)) - here
        found.extend((u, value, min(here), q) for q in sorted(needed))
    return found


def derive_channels(
    graph: LoopGraph,
    assignment: tuple[tuple[int, ...], ...],
    table: CostTable,
    depth_of=lambda producer, value, dst: 2,
) -> tuple[Channel, ...]:
    """The channels an assignment needs, with depths chosen by `depth_of(producer, value,
    dst)`."""
    chans = []
    for u, value, src, dst in required_channels(graph, assignment, table):
        cost = table.values[u, value]
        chans.append(Channel(u, value, src, dst, depth_of(u, value, dst), cost.bytes, cost.memory))
    return tuple(chans)

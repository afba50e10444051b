"""Register tensors a partition holds while it waits for another partition's tensor.

The register need of a partition counts its live tensors and its largest transient one:
within one partition's straight-line code ptxas orders the work so that transients seldom
overlap much. It cannot move code across a wait for another partition, though. When a
partition keeps a tensor (uses it again) past the point where it reads a register tensor
that another partition sent, both are in registers at once. Found compiling for sm_100
(Triton 3.9): an optimum of the persistent GEMM's gelu epilogue sent the 128x128 fp32 tile
(128 registers a thread) to another partition for the `tanh` and kept it for the product
after it, so it held the tile and the `tanh` (128 more) in a partition planned at 208
registers; ptxas spilled 1440 bytes (benchmarks/results/2026-12-02-held-tensors). On sm_90
register tensors do not cross (R9), so nothing here applies there.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .graph import LoopGraph
from .kinds import NodeRole
from .traverse import successors


@dataclass(frozen=True)
class HeldAcrossReceive:
    """`held`'s register result, still to be used by one of `uses` at or after `receiver`,
    while `receiver` reads `source`'s register tensor: both in registers at once when
    `held`, `receiver` and a use run in one partition and `source` in another."""

    held: int
    uses: tuple[int, ...]
    receiver: int
    source: int
    bytes: int  # the two tensors' register bytes

    def applies(self, members: Collection[int]) -> bool:
        """Whether a partition holding `members` holds both tensors at once."""
        return (
            self.held in members
            and self.receiver in members
            and self.source not in members
            and any(u in members for u in self.uses)
        )


def held_across_receives(
    graph: LoopGraph, transient: Sequence[int], tensors_cross: bool
) -> tuple[HeldAcrossReceive, ...]:
    """Every (held, receiver) pair a plan could make (`HeldAcrossReceive`), for register
    tensors of `transient` bytes per node (the cost table's); none when register tensors
    cannot cross partitions on the target. Node ids follow the loop body's order."""
    if not tensors_cross:
        return ()
    nodes = graph.nodes
    uses = {
        n: sorted(u for u in succ if nodes[u].role != NodeRole.TERMINATOR)
        for n, succ in successors(graph, "tensor").items()
        if transient[n]
    }
    found = []
    for source, readers in uses.items():
        for receiver in sorted(set(readers)):
            for held, later in _kept_past(uses, receiver):
                if held != source:
                    bytes_ = transient[held] + transient[source]
                    found.append(HeldAcrossReceive(held, later, receiver, source, bytes_))
    return tuple(found)


def _kept_past(uses: dict[int, list[int]], point: int) -> list[tuple[int, tuple[int, ...]]]:
    """Tensors defined before `point` and used at or after it: (node, those uses)."""
    return [
        (n, tuple(u for u in used if u >= point))
        for n, used in uses.items()
        if n < point and used and used[-1] >= point
    ]


def held_bytes(held: Sequence[HeldAcrossReceive], members: Collection[int]) -> int:
    """The most register bytes a partition of `members` holds across one of its waits."""
    return max((h.bytes for h in held if h.applies(members)), default=0)

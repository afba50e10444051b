"""T1 (sm_100, both releases): a TMEM buffer handed between partitions takes two copies.

Not a lowering rule but a resource, measured: NVWSInsertTmemAref gives a buffer whose
ownership goes from a producer partition (its MMA, or a store) to a consumer (its
tmem_loads) and back two copies, so the next MMA can fill one while the last result is read
from the other. The cost table lists such buffers; `resources.shared_and_tensor_memory` and
CP-SAT's `tensor_memory` group count the second copy for a plan that splits them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .graph import LoopGraph
from .kinds import TMEM_LOAD, TMEM_STORE, NodeKind
from .lowering import tmem_buffers
from .traverse import reaches, successors


@dataclass(frozen=True)
class TmemHandoff:
    """A TMEM buffer that MMAs (and tmem_stores that do not write back what was loaded) fill
    and tmem_loads read in the loop. Once a writer and a reader run in different partitions
    Triton hands it over through an aref and gives it two copies, so the next MMA can fill
    one while the last result is read from the other (NVWSInsertTmemAref's producer-consumer
    multibuffering). A buffer read, modified and stored back (attention's rescaled output)
    is not multibuffered."""

    buffer: str
    writers: tuple[int, ...]  # MMAs (taken as writers: conservative for a TS operand), stores
    readers: tuple[int, ...]  # the tmem_loads

    def handed_off(self, partitions_of: Callable[[int], Iterable[int]]) -> bool:
        """Whether a plan (`partitions_of`: node id -> its partitions) runs a writer and a
        reader in different partitions (the CP-SAT limit's `tmem_handoff` literal)."""
        return any(
            set(partitions_of(w)) != set(partitions_of(r))
            for w in self.writers
            for r in self.readers
        )


def tmem_handoffs(graph: LoopGraph) -> tuple[TmemHandoff, ...]:
    """The TMEM buffers Triton double-buffers once their writers and readers are apart
    (`TmemHandoff`). Measured on both releases: attention_bwd d128's S and dP (128x64 fp32
    each, MMA in one partition, tmem_load in another) take 2 x 64 columns each, so its
    specialized kernels need 576 columns, over the 512 an SM has, and trap at launch; on 3.9
    the persistent GEMM's accumulator (zeroed by a store, filled by the MMA, read by the
    epilogue) takes 2 x 128 once the epilogue runs apart
    (benchmarks/results/2026-12-02-tmem-handoffs)."""
    nodes = graph.nodes
    data = successors(graph, "tensor")
    found = []
    for name, ops in tmem_buffers(graph).items():
        mmas = [n for n in ops if nodes[n].kind == NodeKind.MMA]
        loads = [n for n in ops if nodes[n].op_name == TMEM_LOAD]
        stores = frozenset(n for n in ops if nodes[n].op_name == TMEM_STORE)
        written_back = any(reaches(data, load, stores.__contains__) for load in loads)
        if mmas and loads and not written_back:
            found.append(TmemHandoff(name, (*mmas, *stores), tuple(loads)))
    return tuple(found)

"""Which MMAs the shared stall counts, and the loads that feed them: the part of the cost
table (cost_table.py) that decides where an unspecialized loop waits on its own wgmmas."""

from __future__ import annotations

from ..ir.types import element_bits
from .cost_params import CostParams
from .graph import LoopGraph
from .kinds import NodeKind, NodeRole, op_traits
from .target import Target
from .traverse import reaches, successors


def wgmmas(graph: LoopGraph) -> tuple[int, ...]:
    return tuple(n.id for n in graph.ops() if n.mma and n.mma.accumulator_in_registers)


def tcgen05s(graph: LoopGraph) -> tuple[int, ...]:
    return tuple(n.id for n in graph.ops() if n.mma and not n.mma.accumulator_in_registers)


def stalling_wgmmas(
    graph: LoopGraph, target: Target, params: CostParams, wgmmas
) -> tuple[int, ...]:
    """The wgmmas the shared stall counts: those whose result some node other than a
    terminator reads in the same iteration, and the accumulator chains (read only by the next
    iteration) unless the release pipelines them (`LoweringFacts.pipelines_wgmma_chains`) or
    a stage holds more of the chain's K than one shared-memory row of
    `CostParams.wgmma_stall_max_k_bytes` (`_wgmma_k_bytes`). None in a loop that stores the
    tile its wgmmas compute (`stores_tile`)."""
    if stores_tile(graph, wgmmas):
        return ()
    limit = params.wgmma_stall_max_k_bytes
    return tuple(
        n
        for n in wgmmas
        if any(_read_in_iteration(graph, e) for e in graph.out_edges(n))
        or (
            not target.triton.pipelines_wgmma_chains
            and (_wgmma_k_bytes(graph.nodes[n].mma) <= limit or not _accumulates(graph, n))
        )
    )


def stores_tile(graph: LoopGraph, mmas=None) -> bool:
    """Whether an MMA's result (of `mmas`; None: every MMA) reaches a global store inside
    the loop, across iterations or nested loops: a loop that finishes an output tile per
    iteration or per inner loop (persistent and grouped GEMMs, the epilogue in the loop,
    flattened or not). Their unspecialized kernels showed no shared stall on the H200
    (Triton 3.6, 8-warp persistent GEMMs: 836-899 cycles per K step unspecialized, 834-904
    specialized; specialized no faster on any of 18 configurations, 0.88-1.01x;
    benchmarks/results/2026-12-04-configspace-h200/decision-analysis.md), where
    non-persistent GEMMs with the same tiles and 128-byte rows stalled 10-36%. Measured,
    not explained: the rule stands for what the sweep measured."""
    stores = {n.id for n in graph.of_kind(NodeKind.STORE)}
    if not stores:
        return False
    if mmas is None:
        mmas = [n.id for n in graph.of_kind(NodeKind.MMA)]
    succ = {n.id: [e.dst for e in graph.out_edges(n.id)] for n in graph.nodes}
    return any(reaches(succ, n, stores.__contains__) for n in mmas)


def _accumulates(graph: LoopGraph, node_id: int) -> bool:
    """Whether the wgmma's result, carried to the next iteration, reaches that iteration's
    issue of the same wgmma (its accumulator, rescaled or not): a chain, not a product some
    other op consumes next iteration (attention's QK^T computed ahead)."""
    nodes = {n.id: [e.dst for e in graph.out_edges(n.id) if not e.distance] for n in graph.nodes}
    return any(
        reaches(nodes, e.dst, node_id.__eq__) for e in graph.out_edges(node_id) if e.distance == 1
    )


def computed_ahead(graph: LoopGraph, wgmmas) -> tuple[int, ...]:
    """The wgmmas (of `wgmmas`) whose result only the next iteration reads, and not as their
    own accumulator: a product computed one iteration ahead of its use (attention's S = QK^T
    with FlashAttention-3's intra-warp-group overlap written into the kernel)."""
    return tuple(
        n
        for n in wgmmas
        if not any(_read_in_iteration(graph, e) for e in graph.out_edges(n))
        and any(e.distance == 1 for e in graph.out_edges(n))
        and not _accumulates(graph, n)
    )


def _wgmma_k_bytes(mma) -> int:
    """Bytes of K one stage feeds a wgmma per row of its operands (K x the element's bytes):
    128 is one 128-byte swizzled row (4 wgmma K-steps of 32 bytes); a 128x128 fp16 TMA tile's
    256 is two (Triton splits its TMA box in two, and a warp group issues 8 wgmmas)."""
    return mma.k * max(element_bits(mma.operand_type), 8) // 8


def operand_loads(graph: LoopGraph, wgmmas) -> tuple[int, ...]:
    """Loads (TMA or pointer) whose tile a wgmma reads from shared memory: load, local_alloc,
    memdesc views, wgmma. Their stages are what the shared stall is about; a load whose data
    is computed on first (attention_bwd's delta, 256 bytes) waits on no stage a wgmma holds."""
    targets = frozenset(wgmmas)
    memdesc = successors(graph, "memdesc")
    return tuple(
        n.id
        for n in graph.of_kind(NodeKind.LOAD)
        if any(
            e.distance == 0
            and op_traits(graph.nodes[e.dst].op_name).allocates == "shared"
            and reaches(memdesc, e.dst, targets.__contains__)
            for e in graph.out_edges(n.id)
        )
    )


def _read_in_iteration(graph: LoopGraph, edge) -> bool:
    return edge.distance == 0 and graph.nodes[edge.dst].role != NodeRole.TERMINATOR


# -- per-node coefficients -------------------------------------------------------------------

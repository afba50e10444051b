"""What a partition or a plan occupies: warps, registers, shared and tensor memory.

These read a `CostTable` (its per-node register bytes and buffers); `cost_table` itself uses
`single_partition_ctas`, so the table type is only named here for type checkers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from math import ceil
from typing import TYPE_CHECKING

from .graph import LoopGraph
from .held_tensors import held_bytes
from .kinds import NodeRole
from .plan import Plan
from .target import Target

if TYPE_CHECKING:
    from .cost_table import CostTable


def lanes(target: Target, warps: int) -> int:
    """Threads that issue in parallel: a partition uses at most one scheduler per warp."""
    return target.threads_per_warp * min(warps, target.warps_per_group)


def padded_warps(target: Target, warps: int) -> int:
    """Warps a partition occupies: Triton pads partitions to whole warp groups."""
    g = target.warps_per_group
    return -(-warps // g) * g


def lowered_warps(graph: LoopGraph, warps: int) -> int:
    """Warps that hold a partition's tensors in the binary: Triton 3.6 starts every partition
    region at the kernel's num_warps and only ever shrinks it (docs/dropin.md)."""
    return min(warps, graph.num_warps)


def register_bytes(table: CostTable, members: Iterable[int]) -> int:
    """Register bytes a partition holds at its peak: live tensors + its largest transient, or
    the two tensors it holds at once across a wait for another partition's, if more
    (`held_tensors`)."""
    members = set(members)
    live = sum(table.nodes[n].live_bytes for n in members)
    transient = max((table.nodes[n].transient_bytes for n in members), default=0)
    return live + max(transient, held_bytes(table.held, members))


def registers_needed(table: CostTable, members: Iterable[int], warps: int) -> int:
    """setmaxnreg a partition needs at `warps` warps under its cap: base + its register bytes,
    scaled (the release's capped percent), per thread of its lowered warps, rounded up to a
    legal value; may exceed the maximum (then the plan is infeasible)."""
    return _registers(table, members, warps, capped_register_scale(table))


def unspecialized_registers(table: CostTable) -> int:
    """Registers per thread the loop's unspecialized kernel takes, as `registers_needed` but
    at the uncapped percent: no setmaxnreg, so ptxas may use up to its maximum."""
    graph = table.graph
    return _registers(
        table, range(len(graph.nodes)), graph.num_warps, table.params.register_scale_percent
    )


def unspecialized_register_cap(table: CostTable) -> int:
    """Registers per thread ptxas may give the unspecialized kernel: 255, or less where the
    kernel's warps leave less of the register file to each thread."""
    t = table.target
    return min(t.max_registers_per_thread, t.max_regs_per_thread_for(table.graph.num_warps))


def accumulator_registers(table: CostTable) -> int:
    """Registers per thread the unspecialized kernel cannot do without: base registers plus
    the wgmma accumulators it carries across iterations (a GEMM's; attention's O, and S when
    it is computed a block ahead), at the kernel's warps. An accumulator counts when a
    carried register tensor has its size (fp32, m x n), each carried tensor once: what else
    a loop carries (pointer tiles) the compiler can recompute, an accumulator it cannot.
    A tensor a nested loop carries counts too: a persistent GEMM's tile loop holds the K
    loop's accumulator for the whole of that loop, which is most of the iteration (the cost
    table counts it as a transient for the partitions' register need; here it is what the
    kernel must hold)."""
    graph = table.graph
    carried = Counter(
        node.out_bytes
        for node in graph.nodes
        if node.is_value and node.value_kind == "tensor" and node.role == NodeRole.ITER_ARG
    )
    held = 0
    for n in table.wgmmas:
        mma = table.graph.nodes[n].mma
        size = 4 * mma.m * mma.n if mma else 0
        if carried[size] > 0:
            carried[size] -= 1
            held += size
    threads = table.target.threads_per_warp * table.graph.num_warps
    return table.params.base_registers + ceil(held / (4 * threads))


def unspecialized_spills(table: CostTable) -> bool:
    """Whether the loop's unspecialized kernel must spill: what it carries across iterations
    alone needs more registers than ptxas may give a thread (`accumulator_registers`).

    A lower bound, not `unspecialized_registers` (which over-counts, for occupancy). Checked
    against ptxas on 212 sm_90 configurations of the config space under Triton 3.6
    (`benchmarks/results/2026-12-04-configspace-usage`, the drop-in's `none` kernels). The
    misses are left to the drop-in's spill check (decision_check.py)."""
    return accumulator_registers(table) > unspecialized_register_cap(table)


def capped_register_scale(table: CostTable) -> int:
    """Percent at which tensor bytes count in a partition under setmaxnreg: the release's
    measured one where it was measured (sm_90), else the unspecialized one."""
    capped = table.target.triton.capped_register_scale_percent
    if capped is None or not table.target.mma_accumulator_in_registers:
        return table.params.register_scale_percent
    return capped


def _registers(table: CostTable, members: Iterable[int], warps: int, scale_percent: int) -> int:
    t, params = table.target, table.params
    threads = t.threads_per_warp * lowered_warps(table.graph, warps)
    scaled = register_bytes(table, members) * scale_percent
    need = params.base_registers + ceil(scaled / (100 * 4 * threads))
    return max(t.setmaxnreg_min, ceil(need / t.setmaxnreg_step) * t.setmaxnreg_step)


def single_partition_ctas(table: CostTable) -> int:
    """CTAs per SM of the loop's unspecialized kernel, as its registers (ptxas caps them at
    the setmaxnreg maximum and spills), shared memory (the pipeliner gives each in-loop
    buffer one copy per stage) and warps allow."""
    t, graph = table.target, table.graph
    need = unspecialized_registers(table)
    regs = min(need, t.setmaxnreg_max) * t.threads_per_warp * graph.num_warps
    smem = table.hoisted_smem + sum(
        b * pipeline_copies(graph, n) for n, b in table.loop_smem.items()
    )
    ctas = min(
        t.registers_per_sm // regs,
        t.blocks_by_shared_memory(smem),
        t.max_warps_per_sm // graph.num_warps,
    )
    return max(ctas, 1)


def pipeline_copies(graph: LoopGraph, alloc: int) -> int:
    """Copies Triton's pipeliner makes of an in-loop shared allocation, whatever the plan:
    one per schedule stage from the load that fills it to the allocation (measured: 4-stage
    TMA GEMMs hold 4 copies of A and B with and without specialization)."""
    node = graph.nodes[alloc]
    loads = [graph.nodes[e.src].stage for e in graph.in_edges(alloc)]
    starts = [s for s in loads if s is not None]
    if node.stage is None or not starts:
        return 1
    return max(1, node.stage - min(starts) + 1)


def shared_and_tensor_memory(plan: Plan, table: CostTable) -> tuple[int, int]:
    """Bytes of shared memory and columns of tensor memory the plan uses: buffers hoisted
    above the loop, in-loop shared allocations times the pipeline's stages or the depth of
    the deepest channel that sends them (or a view of them), whichever is more, in-loop
    tensor memory times that depth, a second copy of each TMEM buffer the plan hands between
    partitions (`tmem_handoffs.TmemHandoff`), and register values staged per channel stage."""
    depth_of_alloc: dict[int, int] = {}
    smem = table.hoisted_smem
    for c in plan.channels:
        vc = table.values.get((c.producer, c.value))
        if vc is None:
            continue
        if vc.staged:
            smem += vc.bytes * c.depth
        if vc.alloc is not None:  # the allocation is copied per stage of its deepest channel
            depth_of_alloc[vc.alloc] = max(depth_of_alloc.get(vc.alloc, 1), c.depth)
    smem += sum(
        b * max(pipeline_copies(table.graph, n), depth_of_alloc.get(n, 1))
        for n, b in table.loop_smem.items()
    )
    tmem = table.hoisted_tmem_columns + sum(
        cols * depth_of_alloc.get(n, 1) for n, cols in table.loop_tmem_columns.items()
    )
    tmem += sum(
        table.tmem_columns_of[h.buffer]
        for h in table.tmem_handoffs
        if h.handed_off(lambda n: plan.assignment[n])
    )
    return smem, tmem

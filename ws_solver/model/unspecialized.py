"""Not specializing: the one-partition plan, and when a kernel's specialized loops would
make its unspecialized ones spill."""

from __future__ import annotations

from collections.abc import Sequence

from .cost import evaluate
from .cost_table import cost_table
from .graph import LoopGraph
from .plan import Partition, Plan, complete_assignment
from .resources import unspecialized_registers
from .target import Target


def single_partition_plan(graph: LoopGraph, target: Target, strategy: str = "") -> Plan:
    """The plan that does not specialize: everything in partition 0 with the kernel's warps."""
    table = cost_table(graph, target)
    decided = {n: (0,) for n in table.assignable}
    assignment = complete_assignment(graph, decided)
    regs = single_partition_registers(graph, target)
    return Plan(
        loop=graph.name,
        target=target.name,
        assignment=assignment,
        partitions=(Partition(0, graph.num_warps, regs, 0, "all"),),
        channels=(),
        strategy=strategy,
    )


def single_partition_registers(graph: LoopGraph, target: Target) -> int:
    """The registers an unspecialized plan reports: what the whole loop needs at the
    kernel's warps, capped at the setmaxnreg maximum (informative only: no setmaxnreg is
    emitted, and the tie-break leaves them out)."""
    return min(unspecialized_registers(cost_table(graph, target)), target.setmaxnreg_max)


def kernel_register_conflict(
    graphs_and_plans: Sequence[tuple[LoopGraph, Plan]], tgt: Target
) -> str | None:
    """Why the specialized loops of one kernel must not be, or None.

    Triton gives a warp-specialized kernel its extra warps for the whole kernel, and ptxas
    compiles all of it for the registers per thread that many warps leave (168 at 12 warps
    on sm_90; setmaxnreg only helps inside the partitions). A loop the plan keeps
    unspecialized then runs under that cap too; if it needs more, it spills, a cliff that a
    per-loop plan does not see (causal attention with S one block ahead: 240 registers in
    its off-band loop, a specialized split of its on-band loop)."""
    widest = max(
        (evaluate(p, g, tgt).total_warps for g, p in graphs_and_plans if p.specialized),
        default=0,
    )
    if not widest or widest <= max(g.num_warps for g, _ in graphs_and_plans):
        return None
    cap = tgt.max_regs_per_thread_for(widest)
    for graph, plan in graphs_and_plans:
        if plan.specialized:
            continue
        need = unspecialized_registers(cost_table(graph, tgt))
        if need > cap:
            return (
                f"not specialized: specializing would make the kernel {widest} warps, and "
                f"its unspecialized loop {graph.loop_index} (line {graph.line}) needs about "
                f"{need} registers per thread, more than the {cap} that leaves"
            )
    return None

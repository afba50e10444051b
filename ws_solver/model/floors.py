"""Floors no plan goes below, checked before any search.

- Memory: every plan keeps the loop's buffers: those allocated above it, and those allocated
  in it times the copies Triton's pipeliner makes of them (`pipeline_copies`); channels only
  add to that. When these alone overflow shared or tensor memory, no plan fits, specialized
  or not (the unspecialized plan uses exactly them).
- Registers: a specialized plan gives each partition base registers per thread plus its
  tensors (`registers_needed`, at the release's capped percent), and its partitions hold
  every live tensor and the largest transient one; partition 0 has the kernel's warps and
  another at least a warp group.
  When that floor is above the register file, the loop cannot be specialized (one
  partition has no `setmaxnreg` and is always possible).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from .cost_table import CostTable, cost_table
from .graph import LoopGraph
from .resources import capped_register_scale, padded_warps, pipeline_copies
from .target import Target


@dataclass(frozen=True)
class Overflow:
    """A limit the loop breaks whatever the plan: `resource` is "shared_memory" or
    "tensor_memory" (the names of the CP-SAT model's constraint groups)."""

    resource: str
    need: int
    limit: int

    def __str__(self) -> str:
        unit = "B of shared memory" if self.resource == "shared_memory" else "tensor-memory columns"
        return f"the loop's buffers alone need {self.need} {unit}, more than the {self.limit}"


def memory_floor(table: CostTable) -> tuple[int, int]:
    """Shared-memory bytes and tensor-memory columns every plan of the loop uses."""
    graph = table.graph
    smem = table.hoisted_smem + sum(
        nbytes * pipeline_copies(graph, n) for n, nbytes in table.loop_smem.items()
    )
    tmem = table.hoisted_tmem_columns + sum(table.loop_tmem_columns.values())
    return smem, tmem


def overflows(graph: LoopGraph, target: Target) -> list[Overflow]:
    """The memory limits no plan of the loop fits (empty when some plan may)."""
    smem, tmem = memory_floor(cost_table(graph, target))
    found = []
    if smem > target.shared_memory_per_cta:
        found.append(Overflow("shared_memory", smem, target.shared_memory_per_cta))
    if tmem > target.tmem_columns:
        found.append(Overflow("tensor_memory", tmem, target.tmem_columns))
    return found


def register_floor(table: CostTable) -> int:
    """Registers of the file that every specialized plan of the loop takes, at least."""
    t, params, graph = table.target, table.params, table.graph
    warps = padded_warps(t, graph.num_warps) + t.warps_per_group
    live = sum(c.live_bytes for c in table.nodes)
    transient = max((c.transient_bytes for c in table.nodes), default=0)
    # A partition's threads hold its tensors' bytes (scaled) between them: whatever the
    # split, the file holds all of them once, 4 bytes a register.
    tensors = ceil((live + transient) * capped_register_scale(table) / (100 * 4))
    return t.threads_per_warp * warps * params.base_registers + tensors


def no_split(graph: LoopGraph, target: Target) -> str | None:
    """Why no specialized plan can fit the register file, or None when one may."""
    floor = register_floor(cost_table(graph, target))
    if floor <= target.registers_per_sm:
        return None
    return (
        f"no split fits the register file: any split needs at least {floor} registers, "
        f"more than its {target.registers_per_sm}"
    )

"""Warps, registers and channel depths for a heuristic assignment.

The rule, in order:
- Warps. Partition 0 runs in Triton's default region, so it has the kernel's `num_warps`.
  Another partition that only issues asynchronous work (TMA loads, tcgen05 MMAs, index math)
  gets 1 warp on targets whose MMA is single-thread issued (sm_100) and a warp group (4)
  elsewhere; any other partition gets 4. Nothing gets fewer warps than its ops need
  (`NodeCost.min_warps`: 4 for a wgmma or a tmem_load), and a partition whose registers per
  thread would exceed the `setmaxnreg` maximum gets the fewest more warps (8) that fit.
  If the partition numbered 0 cannot hold its registers with the kernel's warps, the first
  partition in numbering order that can becomes partition 0 instead (planner.py).
- Registers. Producer-style partitions (LOAD or tcgen05-MMA role, or only issue work) get
  what they need, at least 24 (the `setmaxnreg` minimum).
  The other partitions split what is left of the register file equally per thread (rounded
  down to a multiple of 8, at most 256); one that needs more than its share gets its need and
  the rest is split again. If even the needs do not fit, the caller merges partitions.
- Channel depths. 3 stages for channels out of a LOAD partition and 2 for the others; if the
  shared memory, tensor memory or mbarrier budget is exceeded, LOAD channels drop to 2, then
  other channels to 1, then everything to 1.
"""

from __future__ import annotations

from ..model.channels import derive_channels
from ..model.cost_table import CostTable
from ..model.graph import LoopGraph
from ..model.plan import Channel, Partition, Plan
from ..model.resources import padded_warps, registers_needed, shared_and_tensor_memory
from ..model.target import Target
from .assign import LOAD_ROLE, MMA_ROLE
from .facts import NOT_ISSUE, Facts

DEPTH_STEPS = ((3, 2), (2, 2), (2, 1), (1, 1))  # (LOAD channels, other channels)


def members_of(assignment, partition: int) -> list[int]:
    return [n for n, parts in enumerate(assignment) if partition in parts]


def is_issue_only(facts: Facts, members) -> bool:
    """Only asynchronous issue and index math (region ops and terminators just follow)."""
    return not any(facts.flags[m] & NOT_ISSUE for m in members if m in facts.assignable)


def choose_warps(graph: LoopGraph, target: Target, table: CostTable, facts: Facts, assignment, n):
    """Warps per partition id 0..n-1."""
    warps = []
    for p in range(n):
        members = members_of(assignment, p)
        if p == 0:
            warps.append(graph.num_warps)
            continue
        need = max((table.nodes[m].min_warps for m in members), default=1)
        if is_issue_only(facts, members) and not target.mma_accumulator_in_registers:
            base = 1
        else:
            base = target.warps_per_group
        options = [o for o in table.warp_options if o >= max(base, need)] or [max(base, need)]
        # More threads share the registers: take the fewest warps whose need fits setmaxnreg.
        fitting = [
            o for o in options if registers_needed(table, members, o) <= target.setmaxnreg_max
        ]
        warps.append((fitting or options)[0])
    return warps


def fits_default(graph: LoopGraph, target: Target, table: CostTable, members) -> bool:
    """Whether a partition can be the default region (the kernel's warps hold its registers)."""
    need_warps = max((table.nodes[m].min_warps for m in members), default=1)
    need = registers_needed(table, members, graph.num_warps)
    return need_warps <= graph.num_warps and need <= target.setmaxnreg_max


def choose_registers(target: Target, table: CostTable, facts: Facts, assignment, warps, roles):
    """setmaxnreg per partition, or None when the needs do not fit the register file."""
    n = len(warps)
    lanes = target.threads_per_warp
    need = [registers_needed(table, members_of(assignment, p), warps[p]) for p in range(n)]
    if any(x > target.setmaxnreg_max for x in need):
        return None
    regs: dict[int, int] = {}
    producers = [
        p
        for p in range(n)
        if roles[p] in (LOAD_ROLE, MMA_ROLE) or is_issue_only(facts, members_of(assignment, p))
    ]
    for p in producers:
        regs[p] = max(target.setmaxnreg_min, need[p])
    compute = [p for p in range(n) if p not in regs]
    total_warps = sum(padded_warps(target, w) for w in warps)
    if total_warps > target.max_warps_per_cta:
        return None
    file = target.register_budget(total_warps)
    budget = file - sum(lanes * padded_warps(target, warps[p]) * regs[p] for p in producers)
    while compute:
        threads = sum(lanes * padded_warps(target, warps[p]) for p in compute)
        share = budget // threads if threads else 0
        share = min(target.setmaxnreg_max, share - share % target.setmaxnreg_step)
        over = [p for p in compute if need[p] > share]
        if not over:
            for p in compute:
                regs[p] = share
            break
        for p in over:  # give the needy their need, split the rest again
            regs[p] = need[p]
            budget -= lanes * padded_warps(target, warps[p]) * need[p]
        compute = [p for p in compute if p not in over]
    used = sum(lanes * padded_warps(target, warps[p]) * regs[p] for p in range(n))
    if used > file or any(r < target.setmaxnreg_min for r in regs.values()):
        return None
    return [regs[p] for p in range(n)]


def choose_channels(
    graph: LoopGraph,
    target: Target,
    table: CostTable,
    assignment,
    partitions: tuple[Partition, ...],
    roles: list[str],
) -> tuple[Channel, ...]:
    """Channels with the deepest buffering (per DEPTH_STEPS) that fits the target."""
    channels: tuple[Channel, ...] = ()
    for load_depth, other_depth in DEPTH_STEPS:

        def depth_of(producer: int, value: str, dst: int, ld=load_depth, od=other_depth) -> int:
            src = min(assignment[producer])
            return ld if roles[src] == LOAD_ROLE else od

        channels = derive_channels(graph, assignment, table, depth_of)
        probe = Plan("", target.name, assignment, partitions, channels)
        smem, tmem = shared_and_tensor_memory(probe, table)
        barriers = sum(2 * c.depth for c in channels)
        if (
            smem <= target.shared_memory_per_cta
            and tmem <= target.tmem_columns
            and barriers <= target.max_mbarriers
        ):
            return channels
    return channels


def stage_of(target: Target, role: str) -> int:
    """`ttg.partition.stages` entry: 1 for the MMA partition on sm_100 (as Triton does)."""
    return 1 if role == MMA_ROLE and not target.mma_accumulator_in_registers else 0

"""Capacity repair: a heuristic plan over a memory the target states is split differently.

The seed's rules decide which ops share a partition without looking at the target's
memories; channel depths are then lowered (resources.DEPTH_STEPS) until the plan fits. When
even single-buffered channels overflow shared memory, tensor memory or the mbarriers, the
plan is repaired one step at a time, on the data ops' grouping (the merge phase's result):

- a TMEM buffer whose MMA and tmem_loads sit in different partitions takes a second copy
  (`model/tmem_handoffs.py`; a loop unrolled a few times overflows 512 columns that way):
  the step may move its writers into a reader's partition, or its readers into a writer's,
  so that the buffer is no longer handed over (the MMA is issued where its result is read);
- any two partitions may be merged (fewer channels, no handoff between them), as
  `_merge_for_registers` does for the register file.

Each step takes the candidate that leaves the least overflow, then the least modeled II
(plans Triton cannot lower, or over the register file, are never taken). A move is taken
only while it lowers the overflow, so the repair ends: at a plan that fits, or at one
partition (no specialized plan found).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from ..core.clock import Deadline
from ..core.strategy import Strategy
from ..model.cost import evaluate
from ..model.cost_table import CostTable
from ..model.graph import LoopGraph
from ..model.lowering import lowering_violations
from ..model.plan import Merge, Partition, Plan
from ..model.resources import padded_warps, shared_and_tensor_memory
from ..model.target import Target
from .assign import assign, role_of
from .facts import MMA_REG, Facts
from .resources import (
    choose_channels,
    choose_registers,
    choose_warps,
    fits_default,
    stage_of,
)
from .rules import CAPACITY

Groups = tuple[tuple[int, ...], ...]  # the data nodes of each partition, in partition order


def overflow(plan: Plan, target: Target, table: CostTable) -> Fraction:
    """How far the plan is over the target's shared memory, tensor memory and mbarriers,
    as the sum of the relative excesses (0 when it fits all three)."""
    smem, tmem = shared_and_tensor_memory(plan, table)
    barriers = sum(2 * c.depth for c in plan.channels)
    excess = Fraction(0)
    for used, limit in (
        (smem, target.shared_memory_per_cta),
        (tmem, target.tmem_columns),
        (barriers, target.max_mbarriers),
    ):
        if used > limit:
            excess += Fraction(used - limit, max(limit, 1))
    return excess


def groups_of(plan: Plan, facts: Facts) -> Groups:
    """The data nodes of each partition of a heuristic plan (each data node runs in one)."""
    out: list[list[int]] = [[] for _ in plan.partitions]
    for n in sorted(facts.data):
        out[plan.assignment[n][0]].append(n)
    return tuple(tuple(g) for g in out)


def plan_of(
    graph: LoopGraph,
    target: Target,
    facts: Facts,
    table: CostTable,
    groups: Groups,
    merges: tuple[Merge, ...],
    deadline: Deadline,
) -> Plan | None:
    """The heuristic's plan for a grouping of the data nodes (the rest placed by `assign`,
    resources chosen as for a merged plan); None when its registers or warps do not fit.
    The first group that can be the default region becomes partition 0."""
    groups = tuple(g for g in groups if g)
    lead = next((i for i, g in enumerate(groups) if _can_lead(graph, target, table, g)), 0)
    groups = (groups[lead], *groups[:lead], *groups[lead + 1 :])
    flags = [_or_flags(facts, g) for g in groups]
    roles = [role_of(f) for f in flags]
    data_partition = {n: p for p, g in enumerate(groups) for n in g}
    assignment = assign(graph, facts, table, data_partition, roles, deadline)
    n = len(groups)
    warps = choose_warps(graph, target, table, facts, assignment, n)
    registers = choose_registers(target, table, facts, assignment, warps, roles)
    if registers is None or sum(padded_warps(target, w) for w in warps) > target.max_warps_per_cta:
        return None
    partitions = tuple(
        Partition(
            p,
            warps[p],
            registers[p],
            stage_of(target, roles[p]),
            f"{roles[p]}+wgmma" if flags[p] & MMA_REG else roles[p],
        )
        for p in range(n)
    )
    channels = choose_channels(graph, target, table, assignment, partitions, roles)
    return Plan(
        graph.name, target.name, assignment, partitions, channels, Strategy.HEURISTIC, merges
    )


def repair(
    plan: Plan, graph: LoopGraph, target: Target, facts: Facts, table: CostTable, deadline
) -> Plan | None:
    """A plan that fits the target's memories, from a heuristic plan that does not (None
    when only one partition would be left)."""
    groups = groups_of(plan, facts)
    excess = overflow(plan, target, table)
    merges = plan.merges
    while len(groups) > 1:
        best = None
        for kind, trial, merge in _candidates(plan, groups, facts, table):
            deadline.check("the heuristic's repair")
            if len(trial) < 2:
                continue  # one partition is no repair
            if kind == "move" and best is not None and best[0][0] == 0:
                continue  # a fitting plan is known; moves are only for lowering the overflow
            got = plan_of(graph, target, facts, table, trial, (*merges, merge), deadline)
            if got is None or lowering_violations(graph, got, table.lowering):
                continue
            over = overflow(got, target, table)
            if kind == "move" and over >= excess:
                continue
            key = (over, evaluate(got, graph, target).ii, kind != "merge")
            if best is None or key < best[0]:
                best = (key, trial, got)
        if best is None:
            return None
        (excess, _, _), groups, plan = best
        merges = plan.merges
        if excess == 0:
            return plan
    return None


def _candidates(
    plan: Plan, groups: Groups, facts: Facts, table: CostTable
) -> Iterator[tuple[str, Groups, Merge]]:
    """The repair's next steps: ("move", groups, merge) for each handed-off TMEM buffer
    whose writers or readers can join the other side's partition (alone, and with what
    the lowering rules keep with them), ("merge", ...) for each pair of partitions. The
    Merge records the step in `Plan.merges`."""
    where = {n: p for p, g in enumerate(groups) for n in g}
    for h in table.tmem_handoffs:
        if not h.handed_off(lambda n: plan.assignment[n]):
            continue
        for movers, anchor in ((h.writers, h.readers[0]), (h.readers, h.writers[0])):
            if anchor not in where or not any(m in where for m in movers):
                continue
            dst = where[anchor]
            alone = {m for m in movers if m in where and where[m] != dst}
            views = _together_with(alone, table, where, dst)
            for moved in (alone, alone | views) if views else (alone,):
                if moved:
                    trial = tuple(
                        tuple(
                            sorted(
                                (*(n for n in g if n not in moved), *(moved if p == dst else ()))
                            )
                        )
                        for p, g in enumerate(groups)
                    )
                    yield "move", trial, Merge(CAPACITY, anchor, min(moved))
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            joined = tuple(sorted((*groups[a], *groups[b])))
            trial = tuple(joined if p == a else g for p, g in enumerate(groups) if p != b)
            yield "merge", trial, Merge(CAPACITY, groups[a][0], groups[b][0])


def _together_with(moved: set[int], table: CostTable, where: dict[int, int], dst: int) -> set[int]:
    """The data nodes outside partition `dst` that lowering rules keep with the moved ones
    (`LoweringRules.together`: memory views, TMA staging, ...), transitively."""
    pairs: dict[int, set[int]] = {}
    for t in table.lowering.together:
        pairs.setdefault(t.src, set()).add(t.dst)
        pairs.setdefault(t.dst, set()).add(t.src)
    found: set[int] = set()
    todo = list(moved)
    while todo:
        for p in pairs.get(todo.pop(), ()):
            if p in where and where[p] != dst and p not in moved and p not in found:
                found.add(p)
                todo.append(p)
    return found


def _can_lead(graph: LoopGraph, target: Target, table: CostTable, group) -> bool:
    """Whether a group can be partition 0, the default region (see planner.can_default)."""
    if table.lowering.not_default.intersection(group):
        return False
    return fits_default(graph, target, table, group)


def _or_flags(facts: Facts, members) -> int:
    flags = 0
    for m in members:
        flags |= facts.flags[m]
    return flags

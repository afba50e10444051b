"""`partition` / `decide`: the heuristic plan for one loop, or the reason not to specialize."""

from __future__ import annotations

from ..core.clock import NO_DEADLINE, Deadline
from ..core.strategy import Strategy
from ..model.check import check_plan
from ..model.cost import evaluate
from ..model.cost_table import CostTable, cost_table
from ..model.decision import below_floor, specialize_floor, specializing_pays
from ..model.floors import no_split
from ..model.graph import LoopGraph
from ..model.lowering import TmemIf, lowering_violations
from ..model.plan import Partition, Plan
from ..model.resources import padded_warps, registers_needed
from ..model.target import Target, target_for
from ..model.unspecialized import single_partition_plan
from .assign import assign, cap_partitions, group_cost, number_partitions, role_of
from .facts import MMA_REG, NOT_ISSUE, Facts, facts_for
from .merge import MergeState, merge_data_partitions
from .repair import overflow, repair
from .resources import (
    choose_channels,
    choose_registers,
    choose_warps,
    fits_default,
    members_of,
    stage_of,
)
from .rules import REGISTERS


def partition(graph: LoopGraph, target: Target | None = None, *, force: bool = False) -> Plan:
    """The heuristic plan for `graph` (one partition when specializing does not pay)."""
    return decide(graph, target, force=force)[0]


def decide(
    graph: LoopGraph,
    target: Target | None = None,
    *,
    force: bool = False,
    deadline: Deadline = NO_DEADLINE,
) -> tuple[Plan, str]:
    """The heuristic plan and a one-line reason for it; `clock.OutOfTime` past `deadline`.

    With `force`, a valid specialized plan is returned even when the cost model says it is no
    faster than running the loop as one partition (a loop with no load feeding an MMA is
    still not specialized).
    """
    target = target or target_for(graph.target)
    facts = facts_for(graph, target)
    single = single_partition_plan(graph, target, strategy=Strategy.HEURISTIC)
    if not facts.feeds_mma:
        return single, "not specialized: no load feeds an MMA"
    floor = no_split(graph, target)
    if floor:
        return single, f"not specialized: {floor}"
    plan, why = _specialize(graph, target, facts, deadline)
    if plan is None:
        return single, f"not specialized: {why}"
    ii = evaluate(plan, graph, target).ii
    ii_single = evaluate(single, graph, target).ii
    if ii >= ii_single and not force:
        return single, f"not specialized: no better than one partition (II {ii} vs {ii_single})"
    floor = specialize_floor(graph, target)
    if not specializing_pays(ii, ii_single, floor) and not force:
        return single, below_floor(ii, ii_single, floor)
    return plan, f"specialized: {len(plan.partitions)} partitions (II {ii} vs {ii_single})"


def _specialize(
    graph: LoopGraph, target: Target, facts: Facts, deadline: Deadline
) -> tuple[Plan | None, str]:
    table = cost_table(graph, target)
    state = merge_data_partitions(facts, deadline)
    cap_partitions(state, table, target.max_partitions)
    while len(state.members) > 1:
        deadline.check("the heuristic")
        plan, ids, why = _build(graph, target, facts, table, state)
        if why == _OVER_REGISTERS:
            _merge_for_registers(state, table, ids)
            continue
        if plan is None:
            return None, why
        rules = lowering_violations(graph, plan, table.lowering)
        if rules:  # the rules this heuristic does not steer by: Triton could not lower it
            return None, rules[0]
        problems = check_plan(plan, graph, target)
        if not problems:
            return plan, ""
        if not overflow(plan, target, table):
            return None, f"heuristic plan is invalid ({problems[0]})"
        # Over a memory even with single-buffered channels: split differently (repair.py).
        fixed = repair(plan, graph, target, facts, table, deadline)
        if fixed is None:
            return None, f"no split fits the target's memories ({problems[0]} before repair)"
        problems = check_plan(fixed, graph, target)
        if problems:
            return None, f"heuristic plan is invalid after its repair ({problems[0]})"
        return fixed, ""
    if any(m.rule == REGISTERS for m in state.merges):
        return None, "no split fits the register file (merged into one partition)"
    return None, "every data op merged into one partition"


_OVER_REGISTERS = "registers or warps over the target's"


def _build(
    graph: LoopGraph, target: Target, facts: Facts, table: CostTable, state: MergeState
) -> tuple[Plan | None, dict[int, int], str]:
    """The plan for the merge state as it stands: (plan, ids, ""); (None, ids,
    _OVER_REGISTERS) when its registers or warps do not fit; (None, ids, reason) when
    lowering rule R4 cannot be met."""
    ids, roles, assignment = _number_and_assign(graph, target, facts, table, state)
    split = r4_split(table, state)
    if split and not can_default(graph, target, table, members_of(assignment, 0)):
        return None, ids, _r4_reason(graph, table, split)
    n = len(roles)
    warps = choose_warps(graph, target, table, facts, assignment, n)
    registers = choose_registers(target, table, facts, assignment, warps, roles)
    total_warps = sum(padded_warps(target, w) for w in warps)
    if registers is None or total_warps > target.max_warps_per_cta:
        return None, ids, _OVER_REGISTERS
    root_of = {i: r for r, i in ids.items()}
    partitions = tuple(
        Partition(
            p,
            warps[p],
            registers[p],
            stage_of(target, roles[p]),
            _label(roles[p], state.flags[root_of[p]]),
        )
        for p in range(n)
    )
    channels = choose_channels(graph, target, table, assignment, partitions, roles)
    plan = Plan(
        loop=graph.name,
        target=target.name,
        assignment=assignment,
        partitions=partitions,
        channels=channels,
        strategy=Strategy.HEURISTIC,
        merges=tuple(state.merges),
    )
    return plan, ids, ""


def _number_and_assign(graph, target, facts, table, state):
    """Number the partitions (compute first), assign every node; if partition 0 cannot be the
    default region (`can_default`), the first partition in numbering order that can takes
    its place. Lowering rule R4 numbers partitions itself (`r4_split`): on Triton 3.6 the
    if's partition 0 and the MMA's 1; on 3.9 the MMA's right after the default region's, so
    that the if's comes later."""
    split = r4_split(table, state)
    after: tuple[int, ...] = ()
    if split and not table.lowering.mma_before_if:
        lead = (state.find(split.access), state.find(split.mma))
        ids, roles = number_partitions(state, table, lead=lead)
        return ids, roles, _assign(graph, facts, table, state, ids, roles)
    if split:
        after = (state.find(split.mma),)
        ids, roles = number_partitions(state, table, lead=after)
    else:
        ids, roles = number_partitions(state, table)
    assignment = _assign(graph, facts, table, state, ids, roles)
    if not after and can_default(graph, target, table, members_of(assignment, 0)):
        return ids, roles, assignment
    skip = {*after, *((state.find(split.access),) if split else ())}
    by_id = sorted(ids, key=ids.get)
    for root in by_id:
        if root in skip:
            continue
        if can_default(graph, target, table, members_of(assignment, ids[root])):
            ids, roles = number_partitions(state, table, lead=(root, *after))
            return ids, roles, _assign(graph, facts, table, state, ids, roles)
    return ids, roles, assignment


def can_default(graph: LoopGraph, target: Target, table: CostTable, members) -> bool:
    """Whether a partition can be Triton's default region: its registers fit the kernel's
    warps, and (Triton 3.9, sm_100) it holds no MMA and no TMA load."""
    if table.lowering.not_default.intersection(members):
        return False
    return fits_default(graph, target, table, members)


def r4_split(table: CostTable, state: MergeState) -> TmemIf | None:
    """The TMEM access inside an scf.if that the merged partitions separate from its MMA, if
    any: Triton 3.6 lowers that only with the if's partition as 0 and the MMA's as 1, 3.9
    only with the if's after the MMA's (lowering rule R4)."""
    for t in table.lowering.tmem_ifs:
        access, mma = state.find(t.access), state.find(t.mma)
        if access != mma and access in state.members and mma in state.members:
            return t
    return None


def _r4_reason(graph: LoopGraph, table: CostTable, split: TmemIf) -> str:
    rules = table.lowering
    head = (
        f"Triton {rules.triton} lowering rule R4: the scf.if (node {split.region}) that reads "
        "the MMA's tensor memory in another partition must be "
    )
    if rules.mma_before_if:
        return (
            f"{head}numbered after the MMA's, and no other partition can be partition 0, the "
            f"default region (it holds an MMA or a TMA load, or its registers do not fit the "
            f"kernel's {graph.num_warps} warps)"
        )
    return (
        f"{head}partition 0, the default region, and its registers do not fit the kernel's "
        f"{graph.num_warps} warps"
    )


def _assign(graph, facts, table, state, ids, roles):
    data_partition = {m: ids[r] for r in state.roots() for m in state.members[r]}
    return assign(graph, facts, table, data_partition, roles, state.deadline)


def _label(role: str, flags: int) -> str:
    return f"{role}+wgmma" if flags & MMA_REG else role


def _merge_for_registers(state: MergeState, table: CostTable, ids: dict[int, int]) -> None:
    """Registers or warps do not fit: fold the cheapest other partition into partition 0,
    preferring compute partitions (they hold the registers) and merges no veto forbids."""
    default = next(r for r, i in ids.items() if i == 0)
    others = [r for r in state.roots() if r != default]

    def key(r: int):
        issue_only = not state.flags[r] & NOT_ISSUE
        return (state.vetoed(default, r), issue_only, group_cost(table, state.members[r]), r)

    victim = min(others, key=key)
    state.merge(REGISTERS, default, victim)


def with_resources(
    graph: LoopGraph, target: Target, assignment: tuple[tuple[int, ...], ...], strategy: str
) -> Plan:
    """A plan for an assignment another partitioner made (partition ids 0..n-1, some maybe
    empty), with this heuristic's warps, registers, stages and channel depths, so that the
    cost model can price it. Registers that do not fit are given as the need (the plan's
    check then says so)."""
    facts = facts_for(graph, target)
    table = cost_table(graph, target)
    n = 1 + max((p for parts in assignment for p in parts), default=0)
    roles = [role_of(_or_flags(facts, members_of(assignment, p))) for p in range(n)]
    warps = choose_warps(graph, target, table, facts, assignment, n)
    registers = choose_registers(target, table, facts, assignment, warps, roles) or [
        max(target.setmaxnreg_min, registers_needed(table, members_of(assignment, p), warps[p]))
        for p in range(n)
    ]
    partitions = tuple(
        Partition(p, warps[p], registers[p], stage_of(target, roles[p]), roles[p]) for p in range(n)
    )
    channels = choose_channels(graph, target, table, assignment, partitions, roles)
    return Plan(graph.name, target.name, assignment, partitions, channels, strategy)


def _or_flags(facts: Facts, members) -> int:
    flags = 0
    for m in members:
        if m in facts.assignable:
            flags |= facts.flags[m]
    return flags

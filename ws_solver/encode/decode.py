"""Solution -> Plan, and Plan -> variable values (to hint the solver with a known plan)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..core.strategy import Strategy
from ..model.kinds import NodeKind, NodeRole
from ..model.plan import Channel, Partition, Plan, complete_assignment
from ..model.unspecialized import single_partition_registers
from .constraints import first_free_partition, symmetry_order
from .variables import Encoding, Lit

# What a partition is called after the most telling kind of op it runs.
_ROLES = ((NodeKind.MMA, "mma"), (NodeKind.LOAD, "load"), (NodeKind.STORE, "store"))


def partition_role(enc: Encoding, plan_nodes: list[int], specialized: bool) -> str:
    """A short summary of what runs in a partition, e.g. "load", "mma+load", "compute"."""
    if not specialized:
        return "all"
    kinds = {enc.graph.nodes[n].kind for n in plan_nodes if enc.graph.nodes[n].role == NodeRole.OP}
    return "+".join(name for kind, name in _ROLES if kind in kinds) or "compute"


def decode(enc: Encoding, value: Callable[[Lit], int]) -> Plan:
    """The Plan a solution describes; `value` reads a variable or literal of the solution."""
    table, step = enc.table, enc.target.setmaxnreg_step
    decided = {
        n: tuple(p for p in range(enc.partitions) if value(enc.x[n, p])) for n in table.assignable
    }
    assignment = complete_assignment(enc.graph, decided)
    used = [p for p in range(enc.partitions) if value(enc.used[p])]
    partitions = []
    for p in used:
        warps = next(k for k in table.warp_options if value(enc.warps[p, k]))
        members = [n for n, parts in enumerate(assignment) if p in parts]
        role = partition_role(enc, members, len(used) > 1)
        # One partition has no setmaxnreg: report what the loop needs, not the free variable.
        regs = (
            value(enc.reg_steps[p]) * step
            if len(used) > 1
            else single_partition_registers(enc.graph, enc.target)
        )
        partitions.append(Partition(p, warps, regs, 0, role))
    channels = []
    for (u, v, q), ch in sorted(enc.channel.items()):
        if not value(ch):
            continue
        if (u, 0) in enc.send_busy:  # one copy: it sends from where it runs
            src = next(p for p in range(enc.partitions) if value(enc.x[u, p]))
        else:
            src = next(p for p in range(enc.partitions) if p != q and value(enc.source[u, v, q, p]))
        depth = next(j for j in enc.depths[u, v] if value(enc.depth[u, v, q, j]))
        cost = table.values[u, v]
        channels.append(Channel(u, v, src, q, depth, cost.bytes, cost.memory))
    return Plan(
        loop=enc.graph.name,
        target=enc.target.name,
        assignment=assignment,
        partitions=tuple(partitions),
        channels=tuple(channels),
        strategy=Strategy.OPTIMAL,
    )


def fit(enc: Encoding, plan: Plan) -> Plan:
    """The same plan in the model's terms: the interchangeable partitions (1..K-1, or 2..K-1
    under lowering rule R4) renumbered in first-use order (the symmetry-breaking order) and
    channel depths cut to those the model offers (`useful_depths`). Neither makes `evaluate`
    worse; renumbering leaves it unchanged."""
    assignable = enc.table.assignable
    count = len(plan.partitions)
    fixed = min(first_free_partition(enc.table), count)

    rank = {n: i for i, n in enumerate(symmetry_order(enc))}

    def first(p: int) -> tuple[int, int]:
        return (min((rank[n] for n in assignable if p in plan.assignment[n]), default=1 << 30), p)

    order = [*range(fixed), *sorted(range(fixed, count), key=first)]
    new = {old: i for i, old in enumerate(order)}

    def channel(c: Channel) -> Channel:
        depth = min(c.depth, max(enc.depths.get((c.producer, c.value), (c.depth,))))
        return replace(c, src=new.get(c.src, c.src), dst=new.get(c.dst, c.dst), depth=depth)

    return replace(
        plan,
        assignment=tuple(tuple(sorted(new.get(p, p) for p in ps)) for ps in plan.assignment),
        partitions=tuple(replace(plan.partitions[old], id=i) for i, old in enumerate(order)),
        channels=tuple(
            sorted((channel(c) for c in plan.channels), key=lambda c: (c.producer, c.value, c.dst))
        ),
    )


def plan_values(enc: Encoding, plan: Plan) -> list[tuple[Lit, int]] | None:
    """Values of the decision variables (x, used, warps, registers, channels, depths and
    sources) that describe `plan` (see `fit`); None when it does not fit the model."""
    table, step = enc.table, enc.target.setmaxnreg_step
    count = len(plan.partitions)
    if len(plan.assignment) != len(enc.graph.nodes) or not 0 < count <= enc.partitions:
        return None
    if [p.id for p in plan.partitions] != list(range(count)):
        return None
    if any(p.warps not in table.warp_options or p.registers % step for p in plan.partitions):
        return None
    values: list[tuple[Lit, int]] = []
    for (n, p), x in enc.x.items():
        values.append((x, int(p in plan.assignment[n])))
    for p in range(enc.partitions):
        part = plan.partitions[p] if p < count else None
        values.append((enc.used[p], int(part is not None)))
        values.append((enc.reg_steps[p], part.registers // step if part else 0))
        for k in table.warp_options:
            values.append((enc.warps[p, k], int(part is not None and part.warps == k)))
    sent = {(c.producer, c.value, c.dst): c for c in plan.channels}
    if any(key not in enc.channel for key in sent):
        return None
    for (u, v, q), ch in enc.channel.items():
        c = sent.get((u, v, q))
        values.append((ch, int(c is not None)))
        for j in enc.depths[u, v]:
            values.append((enc.depth[u, v, q, j], int(c is not None and c.depth == j)))
        for p in range(enc.partitions):
            if (u, v, q, p) in enc.source:
                values.append((enc.source[u, v, q, p], int(c is not None and c.src == p)))
    return values

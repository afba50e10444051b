"""Constraint groups of the exact model: one small function per group, in build order.

Each function creates the variables its group defines and records every constraint under the
group's name (`Encoding.add`). The rules mirror `model.check.check_plan` and
`model.plan.complete_assignment` one for one, so that a solution decodes into a Plan that
passes `check_plan`.
"""

from __future__ import annotations

from math import ceil

from ortools.sat.python.cp_model import LinearExpr

from ..model.kinds import NodeRole
from ..model.plan import CHANNEL_DEPTHS, region_members
from ..model.resources import (
    capped_register_scale,
    lowered_warps,
    padded_warps,
    pipeline_copies,
)
from .objective import ii_lower_bound
from .variables import Encoding


def shared_groups(table) -> dict[int, int]:
    """Node -> the lowest node it must share its one partition with, for the nodes of groups
    of two or more: Triton's lowering rules keep a node where another runs (`together`, on a
    specialized loop; unspecialized, everything shares partition 0) and the wgmmas together,
    which for two nodes that run in one partition each means the same partition."""
    single = set(table.assignable) - table.duplicable
    parent = {n: n for n in single}

    def find(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    pairs = [(t.src, t.dst) for t in table.lowering.together]
    first, *rest = table.lowering.same_partition or (None,)
    pairs += [(first, n) for n in rest]
    for a, b in pairs:
        if a in single and b in single:
            ra, rb = find(a), find(b)
            parent[max(ra, rb)] = min(ra, rb)
    return {n: find(n) for n in single if find(n) != n}


def assign_nodes(enc: Encoding) -> None:
    """assignment: x[n,p]; each assignable node runs in one partition (duplicable: >= 1).
    With `collapse`, a node that must share its partition with a lower one (`shared_groups`)
    takes that node's literals."""
    model, table = enc.model, enc.table
    lead = shared_groups(table) if enc.options.collapse else {}
    for n in table.assignable:
        if n in lead:
            for p in range(enc.partitions):
                enc.x[n, p] = enc.member[n, p] = enc.x[lead[n], p]
            continue
        row = []
        for p in range(enc.partitions):
            enc.x[n, p] = enc.member[n, p] = enc.bool(f"x[{n},{p}]")
            row.append(enc.x[n, p])
        if n in table.duplicable:
            enc.add("assignment", model.add_bool_or(row))
        else:
            enc.add("assignment", model.add_exactly_one(row))


def mark_used(enc: Encoding) -> None:
    """partitions: used[p] iff p runs an assignable node; partition 0 always; ids contiguous."""
    model = enc.model
    for p in range(enc.partitions):
        used = enc.bool(f"used[{p}]")
        column = list({enc.x[n, p].index: enc.x[n, p] for n in enc.table.assignable}.values())
        enc.add("partitions", model.add_bool_or(column), used)
        for lit in column:
            enc.add("partitions", model.add_implication(lit, used))
        enc.used.append(used)
    enc.add("partitions", model.add(enc.used[0] == 1))
    for p in range(1, enc.partitions - 1):
        enc.add("partitions", model.add_implication(enc.used[p + 1], enc.used[p]))


def derive_membership(enc: Encoding) -> None:
    """membership: region ops run where their children, their value nodes and the producers
    of the values they yield run (`region_members`); terminators and followers where their
    parent runs (the loop's own terminator: in every used partition)."""
    graph, table = enc.graph, enc.table
    assignable = set(table.assignable)

    def is_region(node) -> bool:
        follower = node.role == NodeRole.TERMINATOR or node.follows_parent
        return node.id not in assignable and not follower

    # Children come after their region op, so walking backwards sees nested regions first.
    for node in reversed(graph.nodes):
        if not is_region(node):
            continue
        kids = [
            c
            for c in region_members(graph, node.id)
            if c in assignable or is_region(graph.nodes[c])
        ]
        if any((c, 0) not in enc.member for c in kids):
            raise ValueError(f"region node {node.id} depends on a region not derived yet")
        for p in range(enc.partitions):
            if kids:
                lits = [enc.member[c, p] for c in kids]
                enc.member[node.id, p] = enc.any_of("membership", lits, f"m[{node.id},{p}]")
            else:
                enc.member[node.id, p] = enc.true if p == 0 else ~enc.true
    for node in graph.nodes:
        if node.role == NodeRole.TERMINATOR or node.follows_parent:
            for p in range(enc.partitions):
                parent = enc.used[p] if node.parent is None else enc.member[node.parent, p]
                enc.member[node.id, p] = parent


def break_symmetry(enc: Encoding) -> None:
    """symmetry: partitions 1..P-1 in first-use order: p's first node in `symmetry_order` is
    not before p-1's (2..P-1 when lowering rule R4 gives partition 1 a meaning, see
    `first_free_partition`). `seen` literals (p-1 runs one of the nodes up to n) keep it
    linear in the nodes."""
    if not enc.options.symmetry_breaking:
        return
    model, nodes = enc.model, symmetry_order(enc)
    for p in range(first_free_partition(enc.table) + 1, enc.partitions):
        seen = None
        for n in nodes:
            here = enc.x[n, p - 1]
            if seen is None:
                seen = here
            else:  # now = seen or here
                now = enc.bool(f"seen[{n},{p - 1}]")
                enc.add("symmetry", model.add_bool_or([~now, seen, here]))
                enc.add("symmetry", model.add_implication(seen, now))
                enc.add("symmetry", model.add_implication(here, now))
                seen = now
            enc.add("symmetry", model.add_implication(enc.x[n, p], seen))


def symmetry_order(enc: Encoding) -> list[int]:
    """The assignable nodes in the order that ranks partitions (`break_symmetry`): program
    order, or the heaviest (least busy time at any warp count) first."""
    nodes = sorted(enc.table.assignable)
    if enc.options.symmetry_order == "heaviest":
        nodes.sort(key=lambda n: -min(enc.table.nodes[n].busy.values(), default=0))
    elif enc.options.symmetry_order != "program":
        raise ValueError(f"unknown symmetry order {enc.options.symmetry_order!r}")
    first = enc.table.lowering.if_mmas  # R4 on 3.9: the MMA's partition before the if's
    return [*first, *(n for n in nodes if n not in first)]


def first_free_partition(table) -> int:
    """The lowest partition id whose number means nothing (ids from it on are interchangeable):
    0 is Triton's default region, and R4 on 3.6 pins an MMA to 1. R4 on 3.9 orders an MMA's
    partition before its if's: with one such MMA ranked first (`symmetry_order`) first-use
    order keeps that; with several, no numbering is free."""
    rules = table.lowering
    if len(rules.if_mmas) > 1:
        return NO_FREE_PARTITION
    return 2 if rules.pins_partition_1 else 1


NO_FREE_PARTITION = 1 << 30


def choose_warps(enc: Encoding) -> None:
    """warps: one warp count per used partition (none for unused ones)."""
    for p in range(enc.partitions):
        row = []
        for k in enc.table.warp_options:
            enc.warps[p, k] = enc.bool(f"w[{p},{k}]")
            row.append(enc.warps[p, k])
        enc.add("warps", enc.model.add(sum(row) == enc.used[p]))


def fix_default_warps(enc: Encoding) -> None:
    """default_warps: partition 0 has the kernel's num_warps: Triton's default region once
    the loop is specialized, the whole kernel when it is not."""
    default = enc.warps[0, enc.graph.num_warps]
    enc.add("default_warps", enc.model.add_bool_or([default]))


def choose_registers(enc: Encoding) -> None:
    """registers: setmaxnreg = step * reg_steps[p], a legal value for used partitions, else 0;
    `reg_total` (the tie-break's field) sums them once the loop is specialized, else is 0
    (one partition has no setmaxnreg; decode reports `single_partition_registers`)."""
    model, t = enc.model, enc.target
    lo, hi = t.setmaxnreg_min // t.setmaxnreg_step, t.setmaxnreg_max // t.setmaxnreg_step
    for p in range(enc.partitions):
        steps = model.new_int_var(0, hi, f"regs[{p}]")
        enc.add("registers", model.add(steps >= lo), enc.used[p])
        enc.add("registers", model.add(steps == 0), ~enc.used[p])
        enc.reg_steps.append(steps)
    enc.reg_total = total = model.new_int_var(0, hi * enc.partitions, "reg_total")
    enc.add("registers", model.add(total == LinearExpr.sum(enc.reg_steps)), enc.multi)
    enc.add("registers", model.add(total == 0), ~enc.multi)


def route_channels(enc: Encoding) -> None:
    """channels: channel[u,v,q] iff a consumer of u's value v runs in q and u does not."""
    model, table = enc.model, enc.table
    for (u, v), cost in table.values.items():
        for q in range(enc.partitions):
            enc.channel[u, v, q] = ch = enc.bool(f"ch[{u},{v},{q}]")
            here, consumers = enc.member[u, q], [enc.member[c, q] for c in cost.consumers]
            enc.add("channels", model.add_bool_or([~ch, ~here]))
            enc.add("channels", model.add_bool_or([~ch, *consumers]))
            for lit in consumers:
                enc.add("channels", model.add_bool_or([~lit, here, ch]))


def choose_depths(enc: Encoding) -> None:
    """channel_depth: one depth per channel, among the depths that can pay off."""
    floor = ii_lower_bound(enc)
    for (u, v), cost in enc.table.values.items():
        enc.depths[u, v] = useful_depths(cost.latency, floor)
        for q in range(enc.partitions):
            for j in enc.depths[u, v]:
                enc.depth[u, v, q, j] = enc.bool(f"d[{u},{v},{q},{j}]")
            depths = [enc.depth[u, v, q, j] for j in enc.depths[u, v]]
            enc.add("channel_depth", enc.model.add(sum(depths) == enc.channel[u, v, q]))


def useful_depths(latency: int, ii_floor: int) -> tuple[int, ...]:
    """Depths up to the first whose latency bound ceil(latency / depth) is below a proven
    lower bound of II: deeper channels only cost memory, barriers and tie-break."""
    useful = []
    for j in CHANNEL_DEPTHS:
        useful.append(j)
        if ceil(latency / j) <= ii_floor:
            break
    return tuple(useful)


def choose_sources(enc: Encoding) -> None:
    """channel_source: which copy of a producer sends each of its channels. A producer with
    one copy sends from where it runs (`send_busy[u,p]` sums the producer side of its
    channels); any copy of a duplicated one may (evaluate charges the channel's `src`),
    which keeps partitions 1..P-1 interchangeable."""
    model, table = enc.model, enc.table
    by_producer: dict[int, list[str]] = {}
    for u, v in table.values:
        by_producer.setdefault(u, []).append(v)
    for u, values in by_producer.items():
        if u in enc.x and u not in table.duplicable:
            costs = {v: table.values[u, v].producer_busy for v in values}
            terms = [costs[v] * enc.channel[u, v, q] for v in values for q in range(enc.partitions)]
            bound = sum(costs.values()) * (enc.partitions - 1)
            for p in range(enc.partitions):
                enc.send_busy[u, p] = busy = model.new_int_var(0, bound, f"send_busy[{u},{p}]")
                enc.add("channel_source", model.add(busy == LinearExpr.sum(terms)), enc.x[u, p])
                enc.add("channel_source", model.add(busy == 0), ~enc.x[u, p])
            continue
        for v in values:
            for q in range(enc.partitions):
                sources = []
                for p in range(enc.partitions):
                    if p != q:
                        enc.source[u, v, q, p] = src = enc.bool(f"src[{u},{v},{q},{p}]")
                        enc.add("channel_source", model.add_implication(src, enc.member[u, p]))
                        sources.append(src)
                enc.add("channel_source", model.add(sum(sources) == enc.channel[u, v, q]))


def limit_partitions(enc: Encoding) -> None:
    """partition_count: used partitions <= target.max_partitions."""
    enc.add("partition_count", enc.model.add(sum(enc.used) <= enc.target.max_partitions))


def padded_total(enc: Encoding) -> LinearExpr:
    """The plan's warps, each partition padded to whole warp groups."""
    t = enc.target
    return LinearExpr.sum([padded_warps(t, k) * w for (_, k), w in enc.warps.items()])


def limit_warps(enc: Encoding) -> None:
    """warp_budget: warps padded to whole warp groups fit the CTA."""
    enc.add("warp_budget", enc.model.add(padded_total(enc) <= enc.target.max_warps_per_cta))


def require_min_warps(enc: Encoding) -> None:
    """min_warps: wgmma issuers and TMEM readers/writers get the warps they need."""
    for n in enc.table.assignable:
        need = enc.table.nodes[n].min_warps
        for p in range(enc.partitions):
            for k in enc.table.warp_options:
                if k < need:
                    lits = [~enc.x[n, p], ~enc.warps[p, k]]
                    enc.add("min_warps", enc.model.add_bool_or(lits))


def respect_lowering(enc: Encoding) -> None:
    """lowering: the lowering rules of the target's Triton (model/lowering.py), each checked
    by `lowering_violations`; all but R1, R7, R12 and R13 only bind a specialized loop."""
    _default_only(enc)
    _not_default(enc)
    _wgmmas_together(enc)
    _no_crossing(enc)
    _exact_consumer(enc)
    _tmem_in_if(enc)
    _tmem_owners(enc)
    _tmem_accesses(enc)


def _default_only(enc: Encoding) -> None:
    """R1: these nodes run in partition 0; R12, R13: these run in partition 0 only."""
    rules = enc.table.lowering
    for n in sorted(rules.default_only):
        enc.add("lowering", enc.model.add(enc.x[n, 0] == 1))
    for n in sorted((rules.loop_results | rules.reduces) - rules.default_only):
        if (n, 0) not in enc.x:
            continue  # decided by what it follows (region ops, terminators)
        enc.add("lowering", enc.model.add(enc.x[n, 0] == 1))
        for p in range(1, enc.partitions):
            enc.add("lowering", enc.model.add(enc.x[n, p] == 0))


def _not_default(enc: Encoding) -> None:
    """The inserted default partition (3.9, sm_100): once specialized, MMAs and TMA loads run
    outside partition 0."""
    for n in sorted(enc.table.lowering.not_default):
        enc.add("lowering", enc.model.add_bool_or([~enc.member[n, 0]]), enc.multi)


def _wgmmas_together(enc: Encoding) -> None:
    """R2 (narrowed): the wgmmas share one partition."""
    first, *rest = enc.table.lowering.same_partition or (None,)
    for n in rest:
        for p in range(enc.partitions):
            if enc.member[n, p] is not enc.member[first, p]:
                enc.add("lowering", enc.model.add(enc.member[n, p] == enc.member[first, p]))


def _no_crossing(enc: Encoding) -> None:
    """R3, R6, R8, R9, R11: dst runs only where src runs."""
    for t in enc.table.lowering.together:
        for p in range(enc.partitions):
            if enc.member[t.dst, p] is enc.member[t.src, p]:
                continue  # one literal: they share their partition (`shared_groups`)
            lits = [~enc.member[t.dst, p], enc.member[t.src, p]]
            enc.add("lowering", enc.model.add_bool_or(lits), enc.multi)


def _exact_consumer(enc: Encoding) -> None:
    """R5: where the consumer runs and the producer does not, a site runs only there."""
    for c in enc.table.lowering.crossings:
        for p in range(enc.partitions):
            sites = [only_in(enc, s, p) for s in c.sites]
            lits = [~enc.member[c.consumer, p], enc.member[c.producer, p], *sites]
            enc.add("lowering", enc.model.add_bool_or(lits), enc.multi)


def _tmem_in_if(enc: Encoding) -> None:
    """R4: a TMEM access in an scf.if away from its MMA puts the MMA in partition 1 and the
    if's body in partition 0 only (3.6), or the if's body in one partition after the MMA's
    (3.9)."""
    member = enc.member
    if enc.table.lowering.mma_before_if:
        for t in enc.table.lowering.tmem_ifs:
            _body_after_mma(enc, t)
        return
    for t in enc.table.lowering.tmem_ifs:
        needs = [only_in(enc, b, 0) for b in t.body]
        needs += [member[t.mma, 1]] if enc.partitions > 1 else []
        for p in range(enc.partitions):
            away = [~member[t.mma, p], member[t.access, p]]  # false: MMA in p, access not
            for need in needs:
                enc.add("lowering", enc.model.add_bool_or([*away, need]), enc.multi)


def _body_after_mma(enc: Encoding, t) -> None:
    """R4 on 3.9 for one access: with the MMA in p and the access not, the body's first op
    runs only in some q > p, and every other body op where it runs."""
    member, model = enc.member, enc.model
    first, *rest = t.body
    for p in range(enc.partitions):
        away = [~member[t.mma, p], member[t.access, p]]  # false: MMA in p, access not
        later = [only_in(enc, first, q) for q in range(p + 1, enc.partitions)]
        enc.add("lowering", model.add_bool_or([*away, *later]), enc.multi)
        for b in rest:
            for q in range(enc.partitions):
                if member[b, q] is member[first, q]:
                    continue
                same = [[~member[b, q], member[first, q]], [member[b, q], ~member[first, q]]]
                for clause in same:
                    enc.add("lowering", model.add_bool_or([*away, *clause]), enc.multi)


def _tmem_owners(enc: Encoding) -> None:
    """R7: the accessors of a TMEM buffer read in the loop are not all in one p != 0; on 3.9,
    once specialized, its MMA and its tmem_loads share no partition."""
    rules, member = enc.table.lowering, enc.member
    for owners in rules.tmem_owners:
        for p in range(1, enc.partitions):
            enc.add("lowering", enc.model.add_bool_or([~member[a, p] for a in owners]))
    for mma, load in rules.tmem_apart:
        for p in range(enc.partitions):
            lits = [~member[mma, p], ~member[load, p]]
            enc.add("lowering", enc.model.add_bool_or(lits), enc.multi)


def _tmem_accesses(enc: Encoding) -> None:
    """R10 (3.9): a TMEM buffer's loads and stores share their partitions, and with its MMAs
    use at most two."""
    member = enc.member
    for i, t in enumerate(enc.table.lowering.tmem_accesses):
        first = t.accesses[0]
        for a in t.accesses[1:]:
            for p in range(enc.partitions):
                enc.add("lowering", enc.model.add(member[a, p] == member[first, p]))
        users = (*t.accesses, *t.mmas)
        span = [
            enc.any_of("lowering", [member[n, p] for n in users], f"tmem_user[{i},{p}]")
            for p in range(enc.partitions)
        ]
        enc.add("lowering", enc.model.add(sum(span) <= 2))


def only_in(enc: Encoding, n: int, p: int):
    """A literal: node n runs in partition p and no other."""
    key = (n, p)
    if key not in enc.exactly:
        if n in enc.x and n not in enc.table.duplicable:
            enc.exactly[key] = enc.x[n, p]
        else:
            others = [~enc.member[n, q] for q in range(enc.partitions) if q != p]
            lits = [enc.member[n, p], *others]
            enc.exactly[key] = enc.all_of("lowering", lits, f"only[{n},{p}]")
    return enc.exactly[key]


def limit_register_need(enc: Encoding) -> None:
    """register_need: once specialized, each partition's setmaxnreg covers base + its live
    tensors + its largest transient tensor (or the two it holds across a wait for another
    partition's, `held_tensors`), scaled, per thread at its lowered warps
    (`registers_needed`)."""
    model, t, table = enc.model, enc.target, enc.table
    base, step = table.params.base_registers, t.setmaxnreg_step
    scale = capped_register_scale(table)
    threads = 100 * 4 * t.threads_per_warp  # bytes * scale / (100 * 4 B * threads * warps)
    biggest = max((c.transient_bytes for c in table.nodes), default=0)
    biggest = max([biggest, *(h.bytes for h in table.held)])
    for p in range(enc.partitions):
        live = LinearExpr.sum(
            [c.live_bytes * enc.member[n, p] for n, c in enumerate(table.nodes) if c.live_bytes]
        )
        transient = model.new_int_var(0, biggest, f"transient[{p}]")
        for n, c in enumerate(table.nodes):
            if c.transient_bytes:
                bound = transient >= c.transient_bytes
                enc.add("register_need", model.add(bound), enc.member[n, p])
        for h in table.held:  # held, receiver, a later use here; the source elsewhere
            both = [enc.member[h.held, p], enc.member[h.receiver, p], ~enc.member[h.source, p]]
            for u in h.uses:
                bound = transient >= h.bytes
                enc.add("register_need", model.add(bound), *both, enc.member[u, p])
        for k in table.warp_options:
            # ceil(scale * (live + transient) / (threads * k)) + base <= step * steps.
            room = threads * lowered_warps(enc.graph, k) * (step * enc.reg_steps[p] - base)
            fits = model.add(scale * (live + transient) <= room)
            enc.add("register_need", fits, enc.warps[p, k], enc.multi)


def limit_register_file(enc: Encoding) -> None:
    """register_file: once specialized, 32 x padded warps x setmaxnreg summed over the
    partitions fits what Triton shares out at the plan's padded warps
    (`Target.register_budget`)."""
    model, t, table = enc.model, enc.target, enc.table
    biggest_group = max(padded_warps(t, k) for k in table.warp_options)
    bound = t.threads_per_warp * biggest_group * t.setmaxnreg_max
    total = []
    for p in range(enc.partitions):
        regs = model.new_int_var(0, bound, f"regfile[{p}]")
        for k in table.warp_options:
            per_step = t.threads_per_warp * padded_warps(t, k) * t.setmaxnreg_step
            fixed = model.add(regs == per_step * enc.reg_steps[p])
            enc.add("register_file", fixed, enc.warps[p, k])
        enc.add("register_file", model.add(regs == 0), ~enc.used[p])
        total.append(regs)
    enc.add("register_file", model.add(sum(total) <= t.registers_per_sm), enc.multi)
    # The budget depends on the total warps: one bound per total the plan may have.
    padded = padded_total(enc)
    step = t.warps_per_group
    for warps in range(step * -(-enc.graph.num_warps // step), t.max_warps_per_cta + 1, step):
        budget = t.register_budget(warps)
        if budget >= t.registers_per_sm:
            continue
        at = model.new_bool_var(f"total_warps=={warps}")
        enc.add("register_file", model.add(padded == warps), at)
        enc.add("register_file", model.add(padded != warps), ~at)
        enc.add("register_file", model.add(sum(total) <= budget), enc.multi, at)


def limit_barriers(enc: Encoding) -> None:
    """mbarriers: a full and an empty barrier per channel stage."""
    stages = LinearExpr.sum([enc.depth_of(u, v, q) for (u, v, q) in enc.channel])
    enc.add("mbarriers", enc.model.add(2 * stages <= enc.target.max_mbarriers))


def size_allocations(enc: Encoding) -> None:
    """alloc_depth: an in-loop allocation whose buffer (or a view of it) is sent over
    channels is copied per stage of its deepest channel (`shared_and_tensor_memory`)."""
    table = enc.table
    for n in sorted({*table.loop_smem, *table.loop_tmem_columns}):
        keys = [key for key, cost in table.values.items() if cost.alloc == n]
        if not keys:
            continue
        depth = enc.model.new_int_var(1, max(CHANNEL_DEPTHS), f"alloc_depth[{n}]")
        stages = [enc.depth_of(u, v, q) for u, v in keys for q in range(enc.partitions)]
        enc.add("alloc_depth", enc.model.add_max_equality(depth, [enc.true, *stages]))
        enc.alloc_depth[n] = depth


def limit_shared_memory(enc: Encoding) -> None:
    """shared_memory: hoisted buffers + in-loop buffers x max(pipeline stages, their depth)
    + staged channel bytes x depth fit the CTA (`shared_and_tensor_memory`)."""
    table = enc.table
    smem = [table.hoisted_smem]
    for u, v, q in enc.channel:
        cost = table.values[u, v]
        if cost.staged:
            smem.append(cost.bytes * enc.depth_of(u, v, q))
    for n, nbytes in table.loop_smem.items():
        copies = pipeline_copies(table.graph, n)
        if n not in enc.alloc_depth:
            smem.append(nbytes * copies)
            continue
        held = enc.model.new_int_var(copies, max(copies, *CHANNEL_DEPTHS), f"smem_copies[{n}]")
        enc.add("shared_memory", enc.model.add_max_equality(held, [copies, enc.alloc_depth[n]]))
        smem.append(nbytes * held)
    limit = enc.target.shared_memory_per_cta
    enc.add("shared_memory", enc.model.add(LinearExpr.sum(smem) <= limit))


def limit_tensor_memory(enc: Encoding) -> None:
    """tensor_memory: hoisted + in-loop columns x their depth fit (sm_100; 0 on sm_90), a
    buffer handed between partitions once more (`tmem_handoffs.TmemHandoff`)."""
    table, member = enc.table, enc.member
    tmem = [table.hoisted_tmem_columns]
    tmem += [cols * enc.alloc_depth.get(n, 1) for n, cols in table.loop_tmem_columns.items()]
    for i, h in enumerate(table.tmem_handoffs):
        apart = enc.model.new_bool_var(f"tmem_handoff[{i}]")
        for p in range(enc.partitions):  # writers' and readers' partitions differ in p
            for w in h.writers:
                for r in h.readers:
                    enc.add("tensor_memory", enc.model.add(apart >= member[w, p] - member[r, p]))
                    enc.add("tensor_memory", enc.model.add(apart >= member[r, p] - member[w, p]))
        tmem.append(table.tmem_columns_of[h.buffer] * apart)
    limit = enc.target.tmem_columns
    enc.add("tensor_memory", enc.model.add(LinearExpr.sum(tmem) <= limit))

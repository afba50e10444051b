"""The objective: `evaluate`'s II (max of busy, unit load, recurrence and channel latency
terms, each an exact integer variable or expression, plus the stalls) times ii_weight, plus
its tie-break."""

from __future__ import annotations

from math import ceil

from ortools.sat.python.cp_model import LinearExpr

from ..model.cost import evaluate, tiebreak
from ..model.cost_table import UNITS
from ..model.resources import lowered_warps
from ..model.unspecialized import single_partition_plan
from .variables import Encoding


def _busy_bound(enc: Encoding) -> int:
    """An upper bound on any partition's busy cycles (every node and channel in one place)."""
    table = enc.table
    nodes = sum(max(c.busy.values(), default=0) for c in table.nodes)
    channels = sum(c.producer_busy + c.consumer_busy for c in table.values.values())
    return nodes + channels * enc.partitions


def ii_lower_bound(enc: Encoding) -> int:
    """II no plan can beat: each unit's load with every node once, each recurrence, each
    node's own issue time, and the issue work of all nodes spread over P partitions."""
    table = enc.table
    least = [min(c.busy.values(), default=0) for c in table.nodes]
    units = [sum(c.units.get(unit, 0) for c in table.nodes) for unit in UNITS]
    recurrences = [r.latency for r in table.recurrences]
    return max(*units, *recurrences, *least, ceil(sum(least) / enc.partitions))


def ii_floor(enc: Encoding) -> int:
    """II no plan can beat, stalls included: the one-partition plan's II, or a specialized
    plan's `ii_lower_bound` plus the occupancy it gives up, whichever is less."""
    table = enc.table
    lost = table.params.lost_occupancy_cycles if table.single_ctas > 1 else 0
    single = evaluate(single_partition_plan(enc.graph, enc.target), enc.graph, enc.target).ii
    return min(single, ii_lower_bound(enc) + lost)


def partition_busy(enc: Encoding) -> None:
    """busy: busy[p] = its nodes' issue cycles at its warp count, per copy, plus the
    producer side of the channels it sends and the consumer side of those it receives."""
    model, table = enc.model, enc.table
    bound = _busy_bound(enc)
    for p in range(enc.partitions):
        busy = model.new_int_var(0, bound, f"busy[{p}]")
        channels = []
        for (u, v, q), ch in enc.channel.items():
            cost = table.values[u, v]
            if q == p:
                channels.append(cost.consumer_busy * ch)
            elif (u, v, q, p) in enc.source:
                channels.append(cost.producer_busy * enc.source[u, v, q, p])
        for (_, pp), sends in enc.send_busy.items():
            if pp == p:
                channels.append(sends)
        for k in table.warp_options:
            nodes = [c.busy[k] * enc.member[n, p] for n, c in enumerate(table.nodes) if c.busy[k]]
            load = LinearExpr.sum(nodes + channels)
            enc.add("busy", model.add(busy == load), enc.warps[p, k])
        enc.add("busy", model.add(busy == 0), ~enc.used[p])
        # Redundant, for the LP: whatever its warps, p is at least as busy as at its best.
        least = [min(c.busy.values()) * enc.member[n, p] for n, c in enumerate(table.nodes)]
        enc.add("busy", model.add(busy >= LinearExpr.sum(least + channels)))
        enc.busy.append(busy)


def unit_load(enc: Encoding) -> None:
    """units: cycles of each SM-wide unit, summed over every copy of every node, plus the
    shared-memory traffic of staged channels."""
    model, table = enc.model, enc.table
    for unit in UNITS:
        terms = []
        for n, c in enumerate(table.nodes):
            cycles = c.units.get(unit, 0)
            terms += [cycles * enc.member[n, p] for p in range(enc.partitions) if cycles]
        if unit == "smem":
            for (u, v, _), ch in enc.channel.items():
                if table.values[u, v].smem_unit:
                    terms.append(table.values[u, v].smem_unit * ch)
        load = model.new_int_var(0, _unit_bound(enc, unit), f"unit[{unit}]")
        enc.add("units", model.add(load == LinearExpr.sum(terms)))
        enc.units[unit] = load


def _unit_bound(enc: Encoding, unit: str) -> int:
    table = enc.table
    nodes = sum(c.units.get(unit, 0) for c in table.nodes) * enc.partitions
    channels = sum(c.smem_unit for c in table.values.values()) * enc.partitions
    return nodes + (channels if unit == "smem" else 0)


def recurrence_terms(enc: Encoding) -> list:
    """recurrences: latency of each loop-carried path, plus the hand-off latency when the
    carried value is channelled to a partition of its iter arg."""
    table, sync = enc.table, enc.target.rates.sync_latency_cycles
    terms = []
    for i, r in enumerate(table.recurrences):
        crossings = []
        if (r.producer, r.value) in table.values:
            for q in range(enc.partitions):
                pair = [enc.channel[r.producer, r.value, q], enc.member[r.carried, q]]
                crossings.append(enc.all_of("recurrences", pair, f"cross[{i},{q}]"))
        crosses = enc.any_of("recurrences", crossings, f"crosses[{i}]")
        terms.append(r.latency + sync * crosses)
    return terms


def channel_latency_terms(enc: Encoding) -> list:
    """channel_latency: a producer runs at most `depth` iterations ahead, so
    II >= ceil(latency / depth) for each channel (0 where there is none)."""
    terms = []
    for u, v, q in enc.channel:
        latency = enc.table.values[u, v].latency
        steps = [ceil(latency / j) * enc.depth[u, v, q, j] for j in enc.depths[u, v]]
        terms.append(LinearExpr.sum(steps))
    return terms


def _ii_bound(enc: Encoding) -> int:
    table, sync = enc.table, enc.target.rates.sync_latency_cycles
    recurrence = max((r.latency for r in table.recurrences), default=0) + sync
    channel = max((c.latency for c in table.values.values()), default=0)
    units = max(_unit_bound(enc, u) for u in UNITS)
    return max(_busy_bound(enc), units, recurrence, channel)


def stall_term(enc: Encoding):
    """stalls: `cost.stalls`: the shared wgmma stall when a partition of 2+ (lowered) warp
    groups runs a wgmma the stall counts (`CostTable.stalling_wgmmas`) and a load, the lone
    one when a partition of one warp group runs a wgmma and receives a channel, the
    lost-occupancy cost once specialized, the spill cost while not, and on sm_100 the tcgen05
    serial stall (`_tcgen05_serial`)."""
    table, params = enc.table, enc.table.params
    lost = params.lost_occupancy_cycles * enc.multi if table.single_ctas > 1 else 0
    if table.single_spill_cycles:  # the unspecialized kernel spills (cost.single_spill_cycles)
        lost = lost + table.single_spill_cycles * (1 - enc.multi)
    if table.tcgen05s:  # sm_100: a partition issues a tcgen05 MMA and its loads
        lost = lost + params.tcgen05_serial_stall_cycles * _tcgen05_serial(enc)
    if not table.wgmmas:
        return lost
    group = enc.target.warps_per_group
    wide = [k for k in table.warp_options if lowered_warps(enc.graph, k) >= 2 * group]
    shared, lone = [], []
    for p in range(enc.partitions):
        mma = enc.any_of("ii", [enc.member[n, p] for n in table.wgmmas], f"wgmma[{p}]")
        stalls = mma
        if table.stalling_wgmmas != table.wgmmas:
            stalling = [enc.member[n, p] for n in table.stalling_wgmmas]
            stalls = enc.any_of("ii", stalling, f"stalling_wgmma[{p}]")
        here = enc.any_of("ii", [enc.member[n, p] for n in table.loads], f"loads_here[{p}]")
        into = [ch for (_, _, q), ch in enc.channel.items() if q == p]
        receives = enc.any_of("ii", into, f"receives[{p}]")
        warps = {k: enc.warps[p, k] for k in table.warp_options}
        many = enc.any_of("ii", [w for k, w in warps.items() if k in wide], f"groups2[{p}]")
        one = enc.any_of("ii", [w for k, w in warps.items() if k not in wide], f"groups1[{p}]")
        shared.append(enc.all_of("ii", [stalls, many, here], f"shared_stall[{p}]"))
        lone.append(enc.all_of("ii", [mma, one, receives], f"lone_stall[{p}]"))
    return (
        params.wgmma_shared_stall_cycles * enc.any_of("ii", shared, "shared_stall")
        + params.wgmma_lone_stall_cycles * enc.any_of("ii", lone, "lone_stall")
        + lost
    )


def _tcgen05_serial(enc: Encoding):
    """`cost.tcgen05_serial_stall`: some partition holds a tcgen05 MMA and one of its
    operands' loads (`CostTable.tcgen05_loads`)."""
    table, both = enc.table, []
    for p in range(enc.partitions):
        mma = enc.any_of("ii", [enc.member[n, p] for n in table.tcgen05s], f"tcgen05[{p}]")
        load = enc.any_of("ii", [enc.member[n, p] for n in table.tcgen05_loads], f"tc_load[{p}]")
        both.append(enc.all_of("ii", [mma, load], f"tcgen05_serial[{p}]"))
    return enc.any_of("ii", both, "tcgen05_serial")


def _stall_bound(enc: Encoding) -> int:
    p = enc.table.params
    stalls = p.wgmma_shared_stall_cycles + p.wgmma_lone_stall_cycles + p.lost_occupancy_cycles
    return stalls + p.tcgen05_serial_stall_cycles + enc.table.single_spill_cycles


def minimize_ii(enc: Encoding) -> None:
    """ii: II = max(busy, unit load, recurrences, channel latency) + stalls; objective:
    II * ii_weight + tiebreak(partitions, warps, register steps, channels, stages)."""
    model = enc.model
    terms = [*enc.busy, *enc.units.values(), *recurrence_terms(enc)]
    terms += channel_latency_terms(enc)
    peak = model.new_int_var(ii_lower_bound(enc), _ii_bound(enc), "peak")
    enc.add("ii", model.add_max_equality(peak, terms))
    enc.ii = model.new_int_var(ii_floor(enc), _ii_bound(enc) + _stall_bound(enc), "ii")
    enc.add("ii", model.add(enc.ii == peak + stall_term(enc)))
    warps = LinearExpr.sum([k * w for (_, k), w in enc.warps.items()])
    stages = LinearExpr.sum([enc.depth_of(u, v, q) for u, v, q in enc.channel])
    tb = tiebreak(
        LinearExpr.sum(enc.used),
        warps,
        enc.reg_total,
        LinearExpr.sum(list(enc.channel.values())),
        stages,
    )
    enc.objective = enc.ii * enc.table.params.ii_weight + tb
    model.minimize(enc.objective)

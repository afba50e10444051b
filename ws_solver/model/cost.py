"""The cost model: modeled steady-state iteration time (II) of a plan, with its breakdown.

One model, used everywhere: `cost_table` (cost_table.py) turns a LoopGraph + Target into
integer coefficients (cycles, bytes, registers), with the constants of cost_params.py;
`evaluate` applies them to a Plan; the CP-SAT encoder builds its constraints from the same
table, so the solver's objective and `evaluate` agree exactly. Whether a plan is valid at all
is `check_plan` (check.py).

II = max( busy time of each partition   (a partition is one instruction stream),
          load on each shared SM unit   (tensor cores, TMA/memory, SFU, ALU, shared memory),
          each loop-carried recurrence  (+ a hand-off latency when it crosses partitions),
          each channel's latency / depth (a producer runs at most `depth` iterations ahead) )
   + stalls no bound covers (sm_90 wgmma issue, CTAs per SM given up by specializing),
     fitted on H200 measurements (`stalls`).
A channel carries one value of a producer to one partition that needs it (tokens: a barrier
hand-off; register data: staged through shared memory; buffers: shared, or multibuffered when
allocated in the loop) and adds busy time on both sides (barrier arrive/wait, staging).
Registers, shared memory, tensor memory, barriers and warps are hard limits. One partition
(no specialization) runs with the kernel's warps and no setmaxnreg.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import ceil

from .cost_params import PARAMS, CostParams
from .cost_table import UNITS, CostTable, cost_table
from .graph import LoopGraph
from .plan import Partition, Plan
from .resources import (
    lowered_warps,
    padded_warps,
    registers_needed,
    shared_and_tensor_memory,
    unspecialized_registers,
)
from .target import Target


@dataclass(frozen=True)
class PartitionCost:
    id: int
    busy: int
    registers_needed: int
    warps: int
    registers: int


@dataclass(frozen=True)
class Cost:
    ii: int
    objective: int
    tiebreak: int
    bound_by: str  # what sets II, e.g. "partition 0", "unit tensor", "recurrence %acc"
    partitions: tuple[PartitionCost, ...]
    units: dict[str, int]
    recurrence: int
    channel_latency: int
    channels: int
    channel_bytes: int
    shared_memory: int
    tensor_memory_columns: int
    mbarriers: int
    total_warps: int
    register_file: int
    terms: dict[str, int] = field(default_factory=dict)
    stall: int = 0  # cycles of II beyond its bounds (`stall_cycles`)

    def to_dict(self) -> dict:
        return asdict(self)


def wgmma_stalls(plan: Plan, table: CostTable) -> tuple[bool, bool]:
    """(shared, lone): a partition of 2+ warp groups issues a wgmma the shared stall counts
    (`CostTable.stalling_wgmmas`) and runs a load of a wgmma's operand (`CostTable.loads`);
    a partition of one warp group issues a wgmma and receives a channel (CostParams)."""
    wide_warps = 2 * table.target.warps_per_group
    shared = lone = False
    for p in plan.partitions:
        members = set(plan.nodes_in(p.id))
        if not members.intersection(table.wgmmas):
            continue
        wide = lowered_warps(table.graph, p.warps) >= wide_warps
        stalling = members.intersection(table.stalling_wgmmas)
        shared |= wide and bool(stalling) and any(n in members for n in table.loads)
        lone |= not wide and any(c.dst == p.id for c in plan.channels)
    return shared, lone


def tcgen05_serial_stall(plan: Plan, table: CostTable) -> bool:
    """A partition issues a tcgen05 MMA and a load of its operands (`CostTable.tcgen05_loads`)
    in one stream (CostParams.tcgen05_serial_stall_cycles)."""
    for p in plan.partitions:
        members = set(plan.nodes_in(p.id))
        if members.intersection(table.tcgen05s) and members.intersection(table.tcgen05_loads):
            return True
    return False


def stalls(plan: Plan, table: CostTable) -> dict[str, bool]:
    """Which stalls the plan pays, by the name of their CostParams constant: the wgmma stalls,
    and the CTAs per SM a specialized plan gives up; on a loop with a tcgen05 MMA (sm_100),
    also the tcgen05 serial stall."""
    shared, lone = wgmma_stalls(plan, table)
    found = {
        "wgmma_shared_stall_cycles": shared,
        "wgmma_lone_stall_cycles": lone,
        "lost_occupancy_cycles": plan.specialized and table.single_ctas > 1,
    }
    if table.tcgen05s:
        found["tcgen05_serial_stall_cycles"] = tcgen05_serial_stall(plan, table)
    return found


def stall_cycles(plan: Plan, table: CostTable) -> int:
    """Cycles per iteration II adds to its bounds (`stalls`)."""
    return sum(getattr(table.params, name) for name, on in stalls(plan, table).items() if on)


# Bit widths of the tie-break fields, most significant first. The tie-break is linear (the
# CP-SAT objective uses the same function on solver expressions), so fields are not clamped:
# widths are sized for loops far larger than the corpus and `evaluate` checks them.
TIEBREAK_BITS = (3, 6, 8, 9, 10)  # partitions, warps, register steps, channels, stages


def tiebreak(partitions, warps, register_steps, channels, depth):
    """Lexicographic: fewer partitions, then warps, registers, channels, channel stages."""
    value = 0
    for bits, v in zip(
        TIEBREAK_BITS, (partitions, warps, register_steps, channels, depth), strict=True
    ):
        value = value * (1 << bits) + v
    return value


def _check_tiebreak_fields(*fields: int) -> None:
    for bits, v in zip(TIEBREAK_BITS, fields, strict=True):
        if not 0 <= v < (1 << bits):
            raise ValueError(f"tie-break field {v} exceeds {bits} bits; widen TIEBREAK_BITS")


def evaluate(plan: Plan, graph: LoopGraph, target: Target, params: CostParams = PARAMS) -> Cost:
    """Modeled II and breakdown of a plan (which should pass `check_plan`)."""
    table = cost_table(graph, target, params)
    ids = [p.id for p in plan.partitions]
    busy = dict.fromkeys(ids, 0)
    warps = {p.id: p.warps for p in plan.partitions}
    for n, parts in enumerate(plan.assignment):
        for p in parts:
            busy[p] += table.busy(n, warps[p]) if p in warps else 0
    units = dict.fromkeys(UNITS, 0)
    for n, parts in enumerate(plan.assignment):
        for unit, cycles in table.nodes[n].units.items():
            units[unit] += cycles * len(parts)
    channel_bound = 0
    for c in plan.channels:
        vc = table.values.get((c.producer, c.value))
        if vc is None:
            continue
        if c.src in busy:
            busy[c.src] += vc.producer_busy
        if c.dst in busy:
            busy[c.dst] += vc.consumer_busy
        units["smem"] += vc.smem_unit
        channel_bound = max(channel_bound, ceil(vc.latency / c.depth))
    recurrence, rec_label = 0, ""
    for r in table.recurrences:
        crosses = any(
            (c.producer, c.value) == (r.producer, r.value) and c.dst in plan.assignment[r.carried]
            for c in plan.channels
        )
        value = r.latency + (target.rates.sync_latency_cycles if crosses else 0)
        if value > recurrence:
            recurrence, rec_label = value, graph.nodes[r.carried].label
    candidates = {f"partition {p}": b for p, b in busy.items()}
    candidates.update({f"unit {u}": v for u, v in units.items()})
    candidates[f"recurrence {rec_label}"] = recurrence
    candidates["channel latency"] = channel_bound
    bound_by, peak = max(candidates.items(), key=lambda kv: (kv[1], kv[0]))
    stall = stall_cycles(plan, table) + (0 if plan.specialized else table.single_spill_cycles)
    ii = peak + stall
    if stall:
        bound_by += f" + {stall} stall"

    def need(p: Partition) -> int:
        if not plan.specialized:  # no setmaxnreg: ptxas takes what it likes
            return unspecialized_registers(table)
        return registers_needed(table, plan.nodes_in(p.id), p.warps)

    pcosts = tuple(
        PartitionCost(p.id, busy[p.id], need(p), p.warps, p.registers) for p in plan.partitions
    )
    smem, tmem = shared_and_tensor_memory(plan, table)
    # One partition has no setmaxnreg (the compiler allocates): its registers are no choice.
    reg_steps = (
        sum(p.registers // target.setmaxnreg_step for p in plan.partitions)
        if plan.specialized
        else 0
    )
    fields = (
        len(plan.partitions),
        sum(p.warps for p in plan.partitions),
        reg_steps,
        len(plan.channels),
        sum(c.depth for c in plan.channels),
    )
    _check_tiebreak_fields(*fields)  # the objective is a Python int: exact at any II
    tb = tiebreak(*fields)
    return Cost(
        ii=ii,
        objective=ii * params.ii_weight + tb,
        tiebreak=tb,
        bound_by=bound_by,
        partitions=pcosts,
        units=units,
        recurrence=recurrence,
        channel_latency=channel_bound,
        stall=stall,
        channels=len(plan.channels),
        channel_bytes=sum(c.bytes * c.depth for c in plan.channels),
        shared_memory=smem,
        tensor_memory_columns=tmem,
        mbarriers=sum(2 * c.depth for c in plan.channels),
        total_warps=sum(padded_warps(target, p.warps) for p in plan.partitions),
        register_file=sum(
            target.threads_per_warp * padded_warps(target, p.warps) * p.registers
            for p in plan.partitions
        ),
    )

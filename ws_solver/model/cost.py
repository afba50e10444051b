"""The cost model: modeled steady-state iteration time (II) of a plan, with its breakdown.

One model, used everywhere: `CostTable` turns a LoopGraph + Target into integer coefficients
(cycles, bytes, registers); `evaluate` applies them to a Plan; the CP-SAT encoder builds its
constraints from the same table, so the solver's objective and `evaluate` agree exactly.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from math import ceil

from .graph import LoopGraph
from .kinds import CONTROL_FLOW, NodeKind, NodeRole
from .lowering import LoweringRules, lowering_rules, lowering_violations
from .plan import CHANNEL_DEPTHS, Channel, Plan, complete_assignment, is_assignable, is_duplicable
from .target import Target


@dataclass(frozen=True)
class CostParams:
    """Modeling constants that are not hardware rates (those live in Target.rates)."""

    # Cycles a partition spends issuing one asynchronous op (a TMA copy or a tcgen05/wgmma
    # MMA) with its barrier bookkeeping; single-thread issue, so it does not scale with warps.
    async_issue_cycles: int = 16
    # Busy cycles per side for one channel hand-off per iteration (mbarrier arrive or wait
    # plus phase tracking), on top of the hand-off latency in Rates.sync_latency_cycles.
    channel_sync_cycles: int = 8
    # Cycles for one scalar/index op or a region op's control flow.
    scalar_cycles: int = 2
    # Round-trip latency of a tile load from global memory (L2 miss), in cycles. An estimate
    # (~440 ns at 1.83 GHz) until calibrated on the H200; used only for latency bounds.
    load_latency_cycles: int = 800
    # Registers per thread every partition needs besides its tensors (indices, addresses,
    # loop control, predicates).
    base_registers: int = 24
    # The constants below are fitted by benchmarks/calibrate.py on the H200 measurements in
    # benchmarks/results/gpu-2026-11-29-*.json (it prints them; the values here are its output).
    # ptxas holds more than the tensors the model counts (an op's operands next to its result,
    # wgmma fragments, addresses): tensor bytes count at this percent, the least that covers
    # ptxas's registers on every unspecialized kernel that did not spill.
    register_scale_percent: int = 139
    # Stalls added to II (cycles per iteration), for sm_90's wgmma (`wgmma_stalls`): warp
    # groups of one partition issue their wgmmas together, so when two or more of them also
    # wait on the stage barriers of their own loads, the stage is released (and the next TMA
    # issued) only when the slowest group gets there: specialized 8-warp GEMMs ran 5-20%
    # faster than unspecialized ones.
    wgmma_shared_stall_cycles: int = 170
    # One warp group issuing the wgmma waits on every hand-off from another partition (a
    # stage loaded there, values computed there) and releases a stage only once its wgmma
    # retired (the Hopper fix); no second group's wgmma covers the wait: 4-warp GEMMs ran
    # 4-7% slower specialized.
    wgmma_lone_stall_cycles: int = 71
    # A specialized kernel takes the whole register file (setmaxnreg shares it out), so a
    # loop whose unspecialized kernel fits two CTAs per SM (`single_partition_ctas`) gives up
    # the second CTA, which hid the first one's waits: attention d64 (4 or 8 warps) and the
    # grouped GEMMs ran 11-21% slower specialized.
    lost_occupancy_cycles: int = 212
    # Objective = II * ii_weight + tie-break; ii_weight exceeds any tie-break (36 bits). The
    # objective must stay below 2**53 (CP-SAT reports objective values as doubles), which
    # leaves II up to 2**17 cycles; `evaluate` checks both.
    ii_weight: int = 1 << 36


PARAMS = CostParams()
UNITS = ("tensor", "memory", "sfu", "alu", "smem")


def lanes(target: Target, warps: int) -> int:
    """Threads that issue in parallel: a partition uses at most one scheduler per warp."""
    return target.threads_per_warp * min(warps, target.warps_per_group)


def padded_warps(target: Target, warps: int) -> int:
    """Warps a partition occupies: Triton pads partitions to whole warp groups."""
    g = target.warps_per_group
    return -(-warps // g) * g


@dataclass(frozen=True)
class NodeCost:
    busy: dict[int, int]  # warps -> cycles the partition's stream spends on the node
    units: dict[str, int]  # SM-wide unit -> cycles of that unit
    latency: int  # cycles from inputs ready to output ready
    live_bytes: int  # register bytes live across the iteration (tensor iter args)
    transient_bytes: int  # register bytes of its tensor results while they are in use
    min_warps: int  # MMA issue / TMEM readers need a whole warp group on some targets


@dataclass(frozen=True)
class ValueCost:
    """What sending one value of a node to another partition costs, per channel and stage.

    Tokens (and other data-free values) need only the barrier hand-off; scalars and register
    tensors are staged through shared memory (written by the producer, read by the consumer);
    memory descriptors hand over a buffer, which is copied per stage when it is allocated in
    the loop (`alloc`), else shared as it is."""

    producer: int  # node id
    value: str  # SSA value name, as on `Edge.value`
    kind: str  # the value's kind: "tensor", "scalar", "memdesc", "token", ...
    consumers: tuple[int, ...]  # nodes that need the value (terminators excluded)
    bytes: int  # bytes buffered per stage (0: barrier only)
    memory: str  # "shared", "tensor" or "" (barrier only)
    staged: bool  # register data copied through shared memory (write + read)
    alloc: int | None  # the in-loop allocation (node id) a memdesc is multibuffered in
    producer_busy: int
    consumer_busy: int
    smem_unit: int
    latency: int  # bound: II * depth >= latency


@dataclass(frozen=True)
class Recurrence:
    """A loop-carried value: `producer`'s `value` → (back edge) → iter arg `carried`, with
    the latency of the path iter arg ⇝ producer."""

    producer: int
    value: str
    carried: int
    latency: int


@dataclass(frozen=True)
class CostTable:
    graph: LoopGraph
    target: Target
    params: CostParams
    nodes: tuple[NodeCost, ...]
    # (producer node id, value name) -> channel costs, for every value with consumers, in
    # (producer, value name) order.
    values: dict[tuple[int, str], ValueCost]
    consumers: dict[int, tuple[int, ...]]  # node id -> nodes that need any of its results
    recurrences: tuple[Recurrence, ...]
    hoisted_smem: int  # shared memory allocated above the loop and used in it
    hoisted_tmem_columns: int
    loop_smem: dict[int, int]  # in-loop shared allocation: node id -> bytes per copy
    loop_tmem_columns: dict[int, int]  # in-loop tensor-memory allocation: node id -> columns
    assignable: tuple[int, ...]
    duplicable: frozenset[int]
    warp_options: tuple[int, ...]
    lowering: LoweringRules = field(default_factory=LoweringRules)  # Triton 3.6's rules
    wgmmas: tuple[int, ...] = ()  # MMA ops that accumulate in registers (sm_90's wgmma)
    loads: tuple[int, ...] = ()  # load ops (TMA and pointer loads)
    single_ctas: int = 1  # CTAs per SM of the unspecialized kernel (`single_partition_ctas`)

    def busy(self, node_id: int, warps: int) -> int:
        return self.nodes[node_id].busy[warps]

    def values_of(self, node_id: int) -> list[ValueCost]:
        """The channelled values of one node, by value name."""
        return [v for (u, _), v in self.values.items() if u == node_id]


def cost_table(graph: LoopGraph, target: Target, params: CostParams = PARAMS) -> CostTable:
    return _cost_table_cached(graph, target, params)


@cache
def _cost_table_cached(graph: LoopGraph, target: Target, params: CostParams) -> CostTable:
    warp_options = tuple(sorted(set(target.allowed_partition_warps) | {graph.num_warps}))
    nodes = tuple(_node_cost(graph, target, params, n.id, warp_options) for n in graph.nodes)
    consumers = _consumers(graph)
    hoisted_smem, hoisted_tmem, loop_smem, loop_tmem = _buffers(graph, target)
    values = _value_costs(graph, target, params, nodes, {*loop_smem, *loop_tmem})
    table = CostTable(
        graph=graph,
        target=target,
        params=params,
        nodes=nodes,
        values=values,
        consumers=consumers,
        recurrences=_recurrences(graph, nodes),
        hoisted_smem=hoisted_smem,
        hoisted_tmem_columns=hoisted_tmem,
        loop_smem=loop_smem,
        loop_tmem_columns=loop_tmem,
        assignable=tuple(n.id for n in graph.nodes if is_assignable(graph, n.id)),
        duplicable=frozenset(n.id for n in graph.nodes if is_duplicable(graph, n.id)),
        warp_options=warp_options,
        lowering=lowering_rules(graph, target),
        wgmmas=tuple(n.id for n in graph.ops() if n.mma and n.mma.accumulator_in_registers),
        loads=tuple(n.id for n in graph.of_kind(NodeKind.LOAD)),
    )
    return replace(table, single_ctas=single_partition_ctas(table))


# -- per-node coefficients -------------------------------------------------------------------
def _node_cost(graph, target, params, node_id, warp_options) -> NodeCost:
    node = graph.nodes[node_id]
    rates = target.rates
    units: dict[str, int] = {}
    min_warps = 1
    live = 0
    transient = 0
    if node.is_value:
        # A nested loop's carried tensor lives only while that loop runs (its result is what
        # the code after it uses), so it counts like a transient, not across the iteration.
        if node.value_kind == "tensor" and node.role == NodeRole.ITER_ARG and node.parent is None:
            live = node.out_bytes
        elif node.value_kind == "tensor":
            transient = node.out_bytes
        return NodeCost(dict.fromkeys(warp_options, 0), units, 0, live, transient, 1)
    if node.role == NodeRole.OP:
        transient = _register_result_bytes(graph, node_id)

    def per_element(elements: int, rate_per_lane: float = 1.0):
        return {w: ceil(elements * rate_per_lane / lanes(target, w)) for w in warp_options}

    const = dict.fromkeys(warp_options, params.scalar_cycles)
    kind, name = node.kind, node.op_name
    latency = None
    if node.role == NodeRole.TERMINATOR or node.follows_parent:
        busy = dict.fromkeys(warp_options, 0)
    elif kind == NodeKind.MMA and node.mma is not None:
        rate = rates.mma_flops_per_cycle.get(_mma_key(node.mma.operand_type))
        rate = rate or rates.mma_flops_per_cycle["f16"]
        units["tensor"] = ceil(node.mma.flops / rate)
        busy = dict.fromkeys(warp_options, params.async_issue_cycles)
        latency = units["tensor"]
        if node.mma.accumulator_in_registers:
            min_warps = target.mma_issue_warps
    elif kind == NodeKind.LOAD and name != "tt.load":
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        busy = dict.fromkeys(warp_options, params.async_issue_cycles)
        latency = params.load_latency_cycles
    elif name == "tt.load":
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        units["alu"] = ceil(node.elements / rates.alu_ops_per_cycle)
        busy = per_element(node.elements, 2.0) if node.elements else const
        latency = params.load_latency_cycles
    elif kind == NodeKind.STORE:
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        if name.startswith("tt.descriptor"):
            # Registers are staged through shared memory before the TMA store.
            units["smem"] = ceil(node.io_bytes / rates.smem_bytes_per_cycle)
            busy = {w: params.async_issue_cycles + units["smem"] for w in warp_options}
        else:
            busy = per_element(max(node.elements, 1), 2.0)
    elif kind == NodeKind.TMEM:
        moved = node.out_bytes if name == "ttng.tmem_load" else _operand_bytes(graph, node_id)
        if name in ("ttng.tmem_load", "ttng.tmem_store"):
            busy = {w: ceil(moved / (4 * lanes(target, w))) for w in warp_options}
            # A warp reaches only its own 32 TMEM lanes: both directions need a warp group.
            min_warps = max(target.tmem_reader_warps, 1)
        else:
            busy = const
    elif kind == NodeKind.SFU:
        units["sfu"] = ceil(node.elements / rates.sfu_ops_per_cycle)
        per_lane = rates.alu_ops_per_cycle / rates.sfu_ops_per_cycle
        busy = per_element(node.elements, per_lane)
    elif kind == NodeKind.REDUCE:
        units["alu"] = ceil(2 * _operand_elements(graph, node_id) / rates.alu_ops_per_cycle)
        busy = per_element(_operand_elements(graph, node_id), 2.0)
    elif kind == NodeKind.VIEW:
        moved = _view_traffic(graph, node_id)
        units["smem"] = ceil(moved / rates.smem_bytes_per_cycle)
        busy = dict.fromkeys(warp_options, units["smem"])
    elif kind == NodeKind.SCALAR or node.op_name in CONTROL_FLOW or not node.elements:
        busy = const
    else:  # NONE: elementwise tensor arithmetic, one instruction per element
        units["alu"] = ceil(node.elements / rates.alu_ops_per_cycle)
        busy = per_element(node.elements)
    units = {k: v for k, v in units.items() if v}
    if latency is None:
        latency = busy.get(4, max(busy.values()))
    return NodeCost(busy, units, latency, live, transient, min_warps)


def _mma_key(operand_type: str) -> str:
    return "f32" if operand_type in ("f32", "tf32") else operand_type


def _register_result_bytes(graph: LoopGraph, node_id: int) -> int:
    """Bytes of register tensors the node produces (a TMA load into shared memory has none)."""
    out = [e for e in graph.out_edges(node_id) if e.value_kind == "tensor"]
    if any(e.distance == 1 for e in out):
        return 0  # the new value of a carried tensor takes the old one's registers
    node = graph.nodes[node_id]
    tma_load = node.kind == NodeKind.LOAD and node.op_name != "tt.load"
    if tma_load and all(graph.nodes[e.dst].op_name == "ttg.local_alloc" for e in out):
        return 0
    return max((e.bytes for e in out), default=0)


def _operand_bytes(graph: LoopGraph, node_id: int) -> int:
    return max((e.bytes for e in graph.in_edges(node_id) if e.value_kind == "tensor"), default=0)


def _operand_elements(graph: LoopGraph, node_id: int) -> int:
    found = [e.elements for e in graph.in_edges(node_id) if e.value_kind == "tensor"]
    return max(found, default=graph.nodes[node_id].elements)


def _view_traffic(graph: LoopGraph, node_id: int) -> int:
    """Shared-memory bytes a view moves: layout conversions and register→smem copies."""
    node = graph.nodes[node_id]
    if node.op_name == "ttg.convert_layout":
        return 2 * node.out_bytes
    if node.op_name in ("ttg.local_alloc", "ttg.local_store"):
        sources = [graph.nodes[e.src] for e in graph.in_edges(node_id)]
        # A TMA load writes shared memory itself; only register data is copied.
        if any(s.kind == NodeKind.LOAD and s.op_name != "tt.load" for s in sources):
            return 0
        return _operand_bytes(graph, node_id)
    if node.op_name == "ttg.local_load":
        return node.out_bytes
    return 0


# -- channels --------------------------------------------------------------------------------
def _consumers(graph: LoopGraph) -> dict[int, tuple[int, ...]]:
    """Nodes that need each node's results. Terminators are not consumers: the carried value
    travels on the edge to the iter-arg / if-result node instead."""
    out: dict[int, list[int]] = {n.id: [] for n in graph.nodes}
    for e in graph.edges:
        if graph.nodes[e.dst].role == NodeRole.TERMINATOR:
            continue
        if e.dst not in out[e.src]:
            out[e.src].append(e.dst)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _value_costs(graph, target, params, nodes, allocations) -> dict:
    """Channel costs of every value that has consumers, keyed (producer, value name)."""
    found: dict[tuple[int, str], dict] = {}
    for e in graph.edges:
        if graph.nodes[e.dst].role == NodeRole.TERMINATOR:
            continue
        entry = found.setdefault((e.src, e.value), {"edge": e, "consumers": set()})
        entry["consumers"].add(e.dst)
    alloc_of_name = _allocation_names(graph, allocations)
    rates, sync = target.rates, params.channel_sync_cycles
    out = {}
    for (u, value), entry in sorted(found.items()):
        e = entry["edge"]
        staged = e.value_kind in ("tensor", "scalar")
        alloc = None
        if e.value_kind == "memdesc":
            alloc = _in_loop_allocation(graph, u, value, alloc_of_name)
        nbytes = e.bytes if staged or alloc is not None else 0
        # Staged data lands in shared memory; a buffer keeps its memory; a token needs none.
        memory = "shared" if staged else ((e.memory or "shared") if nbytes else "")
        smem_cycles = ceil(nbytes / rates.smem_bytes_per_cycle) if staged else 0
        out[u, value] = ValueCost(
            producer=u,
            value=value,
            kind=e.value_kind,
            consumers=tuple(sorted(entry["consumers"])),
            bytes=nbytes,
            memory=memory,
            staged=staged,
            alloc=alloc,
            producer_busy=sync + smem_cycles,
            consumer_busy=sync + smem_cycles,
            smem_unit=2 * smem_cycles,
            latency=nodes[u].latency + rates.sync_latency_cycles,
        )
    return out


def _allocation_names(graph: LoopGraph, allocations) -> dict[str, int]:
    """Result name -> node id, for the loop's in-loop allocations."""
    names = {}
    for n in sorted(allocations):
        for e in graph.out_edges(n):
            if e.value_kind == "memdesc":
                names.setdefault(e.value, n)
        names.setdefault(graph.nodes[n].label.split(", ")[0], n)
    return names


def _in_loop_allocation(graph: LoopGraph, u: int, value: str, alloc_of_name) -> int | None:
    """The in-loop allocation a memdesc value of node `u` lives in: `u` itself when it
    allocates, else the root allocation of the view (`Node.buffers`), if allocated in the
    loop."""
    if value in alloc_of_name:
        return alloc_of_name[value]
    inside = [b for b in graph.nodes[u].buffers if b.inside_loop and b.name in alloc_of_name]
    if len(inside) == 1:
        return alloc_of_name[inside[0].name]
    return None


def required_channels(
    graph: LoopGraph, assignment: tuple[tuple[int, ...], ...], table: CostTable
) -> list[tuple[int, str, int, int]]:
    """(producer, value, src partition, dst partition) for each partition that needs a value
    without running its producer; `src` is the producer's lowest partition."""
    found = []
    for (u, value), cost in table.values.items():
        here = set(assignment[u])
        if not here:
            continue
        needed = set().union(*(assignment[v] for v in cost.consumers)) - here
        found.extend((u, value, min(here), q) for q in sorted(needed))
    return found


def derive_channels(
    graph: LoopGraph,
    assignment: tuple[tuple[int, ...], ...],
    table: CostTable,
    depth_of=lambda producer, value, dst: 2,
) -> tuple[Channel, ...]:
    """The channels an assignment needs, with depths chosen by `depth_of(producer, value,
    dst)`."""
    chans = []
    for u, value, src, dst in required_channels(graph, assignment, table):
        cost = table.values[u, value]
        chans.append(Channel(u, value, src, dst, depth_of(u, value, dst), cost.bytes, cost.memory))
    return tuple(chans)


# -- recurrences and buffers -----------------------------------------------------------------
def _recurrences(graph: LoopGraph, nodes) -> tuple[Recurrence, ...]:
    """For each back edge of the WS loop, the longest latency path iter arg ⇝ producer."""
    succ: dict[int, list[int]] = {n.id: [] for n in graph.nodes}
    for e in graph.edges:
        if e.distance == 0 and graph.nodes[e.dst].role != NodeRole.TERMINATOR:
            succ[e.src].append(e.dst)
    order = _topological(graph, succ)
    found = []
    for e in graph.edges:
        if e.distance != 1 or e.carried_by is not None:
            continue
        best: dict[int, int] = {e.dst: 0}
        for n in order:
            if n not in best:
                continue
            for m in succ[n]:
                cand = best[n] + nodes[m].latency
                if cand > best.get(m, -1):
                    best[m] = cand
        if e.src in best:
            found.append(Recurrence(e.src, e.value, e.dst, best[e.src]))
    return tuple(found)


def _topological(graph: LoopGraph, succ: dict[int, list[int]]) -> list[int]:
    indegree = {n: 0 for n in succ}
    for n in succ:
        for m in succ[n]:
            indegree[m] += 1
    ready = sorted(n for n, d in indegree.items() if d == 0)
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in succ[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    return order


def _buffers(graph: LoopGraph, target: Target):
    hoisted_smem = sum(
        b.bytes for b in graph.loop_buffers if not b.inside_loop and b.memory == "shared"
    )
    hoisted_tmem = sum(
        _tmem_columns(target, b.bytes)
        for b in graph.loop_buffers
        if not b.inside_loop and b.memory == "tensor"
    )
    loop_smem, loop_tmem = {}, {}
    for n in graph.nodes:
        if n.op_name == "ttg.local_alloc" and n.role == NodeRole.OP:
            loop_smem[n.id] = _allocated_bytes(n)
        elif n.op_name == "ttng.tmem_alloc" and n.role == NodeRole.OP:
            loop_tmem[n.id] = _tmem_columns(target, _allocated_bytes(n))
    return hoisted_smem, hoisted_tmem, loop_smem, loop_tmem


def _allocated_bytes(node) -> int:
    """Bytes an allocation op allocates: its own buffers (not other results it returns)."""
    names = set(node.label.split(", "))
    own = [b.bytes for b in node.buffers if b.name in names]
    return sum(own) if own else node.out_bytes


def _tmem_columns(target: Target, nbytes: int) -> int:
    """Columns of 128 lanes x 32 bits a buffer takes, rounded as the allocator rounds."""
    columns = max(1, ceil(nbytes / (target.tmem_lanes * 4)))
    if not target.has_tmem:
        return columns
    return max(target.tmem_min_alloc_columns, 1 << (columns - 1).bit_length())


# -- evaluation ------------------------------------------------------------------------------
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
        from dataclasses import asdict

        return asdict(self)


def lowered_warps(graph: LoopGraph, warps: int) -> int:
    """Warps that hold a partition's tensors in the binary: Triton 3.6 starts every partition
    region at the kernel's num_warps and only ever shrinks it (docs/dropin.md)."""
    return min(warps, graph.num_warps)


def register_bytes(table: CostTable, members: Iterable[int]) -> int:
    """Register bytes a partition holds at its peak: live tensors + its largest transient."""
    members = list(members)
    live = sum(table.nodes[n].live_bytes for n in members)
    return live + max((table.nodes[n].transient_bytes for n in members), default=0)


def registers_needed(table: CostTable, members: Iterable[int], warps: int) -> int:
    """setmaxnreg a partition needs at `warps` warps: base + its register bytes, scaled, per
    thread of its lowered warps, rounded up to a legal value; may exceed the maximum (then
    the plan is infeasible)."""
    t, params = table.target, table.params
    threads = t.threads_per_warp * lowered_warps(table.graph, warps)
    scaled = register_bytes(table, members) * params.register_scale_percent
    need = params.base_registers + ceil(scaled / (100 * 4 * threads))
    return max(t.setmaxnreg_min, ceil(need / t.setmaxnreg_step) * t.setmaxnreg_step)


def single_partition_ctas(table: CostTable) -> int:
    """CTAs per SM of the loop's unspecialized kernel, as its registers (ptxas caps them at
    the setmaxnreg maximum and spills), shared memory (the pipeliner gives each in-loop
    buffer one copy per stage) and warps allow."""
    t, graph = table.target, table.graph
    need = registers_needed(table, range(len(graph.nodes)), graph.num_warps)
    regs = min(need, t.setmaxnreg_max) * t.threads_per_warp * graph.num_warps
    smem = table.hoisted_smem + sum(
        b * pipeline_copies(graph, n) for n, b in table.loop_smem.items()
    )
    ctas = min(
        t.registers_per_sm // regs,
        t.shared_memory_per_sm // (smem + t.reserved_shared_memory_per_cta),
        t.max_warps_per_sm // graph.num_warps,
    )
    return max(ctas, 1)


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
        need = registers_needed(cost_table(graph, tgt), range(len(graph.nodes)), graph.num_warps)
        if need > cap:
            return (
                f"not specialized: specializing would make the kernel {widest} warps, and "
                f"its unspecialized loop {graph.loop_index} (line {graph.line}) needs about "
                f"{need} registers per thread, more than the {cap} that leaves"
            )
    return None


def wgmma_stalls(plan: Plan, table: CostTable) -> tuple[bool, bool]:
    """(shared, lone): a partition of 2+ warp groups issues a wgmma and runs a load; a
    partition of one warp group issues a wgmma and receives a channel (CostParams)."""
    wide_warps = 2 * table.target.warps_per_group
    shared = lone = False
    for p in plan.partitions:
        members = set(plan.nodes_in(p.id))
        if not members.intersection(table.wgmmas):
            continue
        wide = lowered_warps(table.graph, p.warps) >= wide_warps
        shared |= wide and any(n in members for n in table.loads)
        lone |= not wide and any(c.dst == p.id for c in plan.channels)
    return shared, lone


def stalls(plan: Plan, table: CostTable) -> dict[str, bool]:
    """Which stalls the plan pays, by the name of their CostParams constant: the wgmma stalls,
    and the CTAs per SM a specialized plan gives up."""
    shared, lone = wgmma_stalls(plan, table)
    return {
        "wgmma_shared_stall_cycles": shared,
        "wgmma_lone_stall_cycles": lone,
        "lost_occupancy_cycles": plan.specialized and table.single_ctas > 1,
    }


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
    """Modeled II and breakdown of a plan (which should pass `plan.check`)."""
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
    stall = stall_cycles(plan, table)
    ii = peak + stall
    if stall:
        bound_by += f" + {stall} stall"
    pcosts = tuple(
        PartitionCost(
            p.id,
            busy[p.id],
            registers_needed(table, plan.nodes_in(p.id), p.warps),
            p.warps,
            p.registers,
        )
        for p in plan.partitions
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
    _check_tiebreak_fields(*fields)
    if ii >= (1 << 53) // params.ii_weight:
        raise ValueError(f"modeled II {ii} is too large for an exact objective")
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
    tensor memory times that depth, and register values staged per channel stage."""
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
    return smem, tmem


# -- validity --------------------------------------------------------------------------------
def violations(plan: Plan, graph: LoopGraph, target: Target) -> list[str]:
    """Every constraint the plan breaks, in words (the same limits the CP-SAT model enforces)."""
    if len(plan.assignment) != len(graph.nodes):
        return [f"assignment covers {len(plan.assignment)} nodes, the loop has {len(graph.nodes)}"]
    table = cost_table(graph, target)
    out: list[str] = []
    ids = [p.id for p in plan.partitions]
    if ids != list(range(len(ids))) or not ids:
        out.append(f"partition ids must be 0..{len(ids) - 1} in order, got {ids}")
        return out
    if len(ids) > target.max_partitions:
        out.append(f"{len(ids)} partitions exceed the limit of {target.max_partitions}")
    part = {p.id: p for p in plan.partitions}

    def label(n: int) -> str:
        if not 0 <= n < len(graph.nodes):
            return f"node {n}"
        return f"node {n} ({graph.nodes[n].op_name} {graph.nodes[n].label})"

    out += lowering_violations(graph, plan, table.lowering)
    for n in table.assignable:
        parts = plan.assignment[n]
        if not parts:
            out.append(f"{label(n)} is in no partition")
        elif len(parts) > 1 and n not in table.duplicable:
            out.append(f"{label(n)} is in partitions {list(parts)} but cannot be duplicated")
        if any(p not in part for p in parts):
            out.append(f"{label(n)} names unknown partitions {list(parts)}")
        for p in parts:
            if p in part and part[p].warps < table.nodes[n].min_warps:
                out.append(
                    f"{label(n)} needs {table.nodes[n].min_warps} warps, "
                    f"partition {p} has {part[p].warps}"
                )
    decided = {n: plan.assignment[n] for n in table.assignable}
    completed = complete_assignment(graph, decided)
    for n, (have, want) in enumerate(zip(plan.assignment, completed, strict=True)):
        if have != want and n not in table.assignable:
            out.append(f"{label(n)} must run in {list(want)} (its region's), not {list(have)}")
    for p in plan.partitions:
        members = plan.nodes_in(p.id)
        if not any(n in table.assignable for n in members):
            out.append(f"partition {p.id} is empty")
        if p.warps not in table.warp_options:
            out.append(f"partition {p.id}: {p.warps} warps is not one of {table.warp_options}")
            continue
        if p.registers not in target.setmaxnreg_values():
            out.append(f"partition {p.id}: {p.registers} is not a legal setmaxnreg value")
        need = registers_needed(table, members, p.warps)
        # Without specialization there is no setmaxnreg: the compiler allocates (or spills).
        if need > p.registers and plan.specialized:
            out.append(f"partition {p.id} needs {need} registers per thread, has {p.registers}")
        if p.stage not in (0, 1):
            out.append(f"partition {p.id}: stage {p.stage} is not 0 or 1")
    if plan.partitions[0].warps != graph.num_warps:
        out.append(
            f"partition 0 runs in the default region with the kernel's {graph.num_warps} "
            f"warps, not {plan.partitions[0].warps}"
        )
    warps = sum(padded_warps(target, p.warps) for p in plan.partitions)
    if warps > target.max_warps_per_cta:
        out.append(f"{warps} warps (padded to warp groups) exceed {target.max_warps_per_cta}")
    regs = sum(
        target.threads_per_warp * padded_warps(target, p.warps) * p.registers
        for p in plan.partitions
    )
    if regs > target.registers_per_sm and plan.specialized:
        out.append(f"{regs} registers exceed the register file of {target.registers_per_sm}")
    want = {(u, v, q) for u, v, _, q in required_channels(graph, plan.assignment, table)}
    have = [(c.producer, c.value, c.dst) for c in plan.channels]
    for u, v, q in sorted(want - set(have)):
        out.append(f"{v} of {label(u)} is needed in partition {q} but has no channel there")
    for u, v, q in sorted(set(have) - want):
        out.append(f"channel of {v} from {label(u)} to partition {q} is not needed")
    if len(set(have)) != len(have):
        out.append("a value has two channels into one partition")
    for c in plan.channels:
        if c.depth not in CHANNEL_DEPTHS:
            out.append(
                f"channel of {c.value} from {label(c.producer)}: depth {c.depth} "
                f"not in {CHANNEL_DEPTHS}"
            )
        vc = table.values.get((c.producer, c.value))
        if vc is not None and (c.bytes, c.memory) != (vc.bytes, vc.memory):
            out.append(
                f"channel of {c.value} from {label(c.producer)} carries {c.bytes} B of "
                f"{c.memory or 'no'} memory, not {vc.bytes} B of {vc.memory or 'no'} memory"
            )
        if 0 <= c.producer < len(plan.assignment) and c.src not in plan.assignment[c.producer]:
            out.append(
                f"channel of {c.value} from {label(c.producer)} is sent from partition "
                f"{c.src}, which does not run it"
            )
    smem, tmem = shared_and_tensor_memory(plan, table)
    if smem > target.shared_memory_per_cta:
        out.append(f"{smem} B of shared memory exceed {target.shared_memory_per_cta} B")
    if tmem > target.tmem_columns:
        out.append(f"{tmem} tensor-memory columns exceed {target.tmem_columns}")
    barriers = sum(2 * c.depth for c in plan.channels)
    if barriers > target.max_mbarriers:
        out.append(f"{barriers} mbarriers exceed {target.max_mbarriers}")
    return out


def single_partition_plan(graph: LoopGraph, target: Target, strategy: str = "") -> Plan:
    """The plan that does not specialize: everything in partition 0 with the kernel's warps."""
    table = cost_table(graph, target)
    decided = {n: (0,) for n in table.assignable}
    assignment = complete_assignment(graph, decided)
    from .plan import Partition

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
    table = cost_table(graph, target)
    need = registers_needed(table, range(len(graph.nodes)), graph.num_warps)
    return min(need, target.setmaxnreg_max)

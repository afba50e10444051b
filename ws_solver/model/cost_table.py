"""The cost table: a LoopGraph + Target turned into integer coefficients (cycles, bytes,
registers) per node, per channelled value and per loop-carried recurrence.

`evaluate` (cost.py) applies them to a Plan; the CP-SAT encoder builds its constraints from
the same table, so the solver's objective and `evaluate` agree exactly. The constants that are
not hardware rates are in cost_params.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from math import ceil

from .cost_params import PARAMS, CostParams
from .graph import LoopGraph
from .held_tensors import HeldAcrossReceive, held_across_receives
from .kinds import CONTROL_FLOW, POINTER_LOAD, TMEM_LOAD, TMEM_STORE, NodeKind, NodeRole, op_traits
from .lowering import LoweringRules, lowering_rules
from .mma_stalls import operand_loads, stalling_wgmmas, tcgen05s, wgmmas
from .plan import is_assignable, is_duplicable
from .resources import lanes, single_partition_ctas, unspecialized_spills
from .target import Target
from .tmem_handoffs import TmemHandoff, tmem_handoffs
from .traverse import longest_paths

UNITS = ("tensor", "memory", "sfu", "alu", "smem")


@dataclass(frozen=True)
class NodeCost:
    busy: dict[int, int]  # warps -> cycles the partition's stream spends on the node
    units: dict[str, int]  # SM-wide unit -> cycles of that unit
    latency: int  # cycles from inputs ready to output ready
    live_bytes: int  # register bytes live across the iteration (tensor iter args)
    transient_bytes: int  # register bytes of its tensor results while they are in use
    min_warps: int  # MMA issue / TMEM readers need a warp group; Triton keeps big tensors wide


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
    tmem_columns_of: dict[str, int]  # tensor-memory buffer name -> columns (of one copy)
    tmem_handoffs: tuple[TmemHandoff, ...]  # two copies once a plan splits them (T1)
    loop_smem: dict[int, int]  # in-loop shared allocation: node id -> bytes per copy
    loop_tmem_columns: dict[int, int]  # in-loop tensor-memory allocation: node id -> columns
    assignable: tuple[int, ...]
    duplicable: frozenset[int]
    warp_options: tuple[int, ...]
    lowering: LoweringRules = field(default_factory=LoweringRules)  # Triton 3.6's rules
    wgmmas: tuple[int, ...] = ()  # MMA ops that accumulate in registers (sm_90's wgmma)
    stalling_wgmmas: tuple[int, ...] = ()  # the shared stall counts these (mma_stalls.py)
    loads: tuple[int, ...] = ()  # loads a wgmma reads through shared memory
    tcgen05s: tuple[int, ...] = ()  # MMA ops that accumulate in tensor memory (sm_100's tcgen05)
    tcgen05_loads: tuple[int, ...] = ()  # loads a tcgen05 MMA reads through shared memory
    single_ctas: int = 1  # CTAs per SM of the unspecialized kernel (`single_partition_ctas`)
    # Cycles a spilling unspecialized kernel adds to its II (`single_spill_cycles`); 0 when
    # its registers fit.
    single_spill_cycles: int = 0
    # Register tensors a partition may hold while it reads another's (`held_tensors`).
    held: tuple[HeldAcrossReceive, ...] = ()

    def busy(self, node_id: int, warps: int) -> int:
        return self.nodes[node_id].busy[warps]

    def values_of(self, node_id: int) -> list[ValueCost]:
        """The channelled values of one node, by value name."""
        return self._values_by_producer.get(node_id, [])

    @cached_property
    def _values_by_producer(self) -> dict[int, list[ValueCost]]:
        found: dict[int, list[ValueCost]] = {}
        for (u, _), v in self.values.items():
            found.setdefault(u, []).append(v)
        return found


def cost_table(graph: LoopGraph, target: Target, params: CostParams = PARAMS) -> CostTable:
    return _cost_table_cached(graph, target, params)


@cache
def _cost_table_cached(graph: LoopGraph, target: Target, params: CostParams) -> CostTable:
    warp_options = tuple(sorted(set(target.allowed_partition_warps) | {graph.num_warps}))
    nodes = tuple(
        _kept_by_triton(
            target, graph.num_warps, _node_cost(graph, target, params, n.id, warp_options)
        )
        for n in graph.nodes
    )
    consumers = _consumers(graph)
    hoisted_smem, tmem_of, loop_smem, loop_tmem = _buffers(graph, target)
    hoisted_tmem = sum(tmem_of[b.name] for b in graph.loop_buffers if _hoisted_tmem(b))
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
        tmem_columns_of=tmem_of,
        tmem_handoffs=tmem_handoffs(graph) if target.has_tmem else (),
        loop_smem=loop_smem,
        loop_tmem_columns=loop_tmem,
        assignable=tuple(n.id for n in graph.nodes if is_assignable(graph, n.id)),
        duplicable=frozenset(n.id for n in graph.nodes if is_duplicable(graph, n.id)),
        warp_options=warp_options,
        lowering=lowering_rules(graph, target),
        wgmmas=(wgmma_ids := wgmmas(graph)),
        stalling_wgmmas=stalling_wgmmas(graph, target, params, wgmma_ids),
        loads=operand_loads(graph, wgmma_ids),
        tcgen05s=(tcgen05_ids := tcgen05s(graph)),
        tcgen05_loads=operand_loads(graph, tcgen05_ids),
        held=held_across_receives(
            graph, [c.transient_bytes for c in nodes], not target.mma_accumulator_in_registers
        ),
    )
    return replace(
        table,
        single_ctas=single_partition_ctas(table),
        single_spill_cycles=single_spill_cycles(table),
    )


def single_spill_cycles(table: CostTable) -> int:
    """What spilling costs the unspecialized kernel per iteration: its II without stalls
    (every node issued by the kernel's warps, each unit's load, each recurrence) times
    `CostParams.spill_slowdown_percent`; 0 when its registers fit (`unspecialized_spills`)."""
    if not unspecialized_spills(table):
        return 0
    warps = table.graph.num_warps
    busy = sum(c.busy[warps] for c in table.nodes)
    units = max(sum(c.units.get(u, 0) for c in table.nodes) for u in UNITS)
    recurrence = max((r.latency for r in table.recurrences), default=0)
    return ceil(max(busy, units, recurrence) * table.params.spill_slowdown_percent / 100)


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
    traits = op_traits(name)
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
    elif kind == NodeKind.LOAD and traits.is_async:
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        busy = dict.fromkeys(warp_options, params.async_issue_cycles)
        latency = params.load_latency_cycles
    elif name == POINTER_LOAD:
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        units["alu"] = ceil(node.elements / rates.alu_ops_per_cycle)
        busy = per_element(node.elements, 2.0) if node.elements else const
        latency = params.load_latency_cycles
    elif kind == NodeKind.STORE:
        units["memory"] = ceil(node.io_bytes / rates.tma_bytes_per_cycle)
        if traits.tma and "shared" not in traits.reads:
            # Registers are staged through shared memory before the TMA store.
            units["smem"] = ceil(node.io_bytes / rates.smem_bytes_per_cycle)
            busy = {w: params.async_issue_cycles + units["smem"] for w in warp_options}
        else:
            busy = per_element(max(node.elements, 1), 2.0)
    elif kind == NodeKind.TMEM:
        moved = node.out_bytes if name == TMEM_LOAD else _operand_bytes(graph, node_id)
        if name in (TMEM_LOAD, TMEM_STORE):
            busy = {w: ceil(moved / (4 * lanes(target, w))) for w in warp_options}
            if name == TMEM_LOAD:
                transient = tmem_load_held_bytes(target, graph.num_warps, transient)
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
    if name in REGISTER_VIEWS and _tmem_tile_source(graph, node_id) is not None:
        # The same registers as the tile it views: what the tmem_load holds, no more.
        transient = tmem_load_held_bytes(target, graph.num_warps, transient)
    units = {k: v for k, v in units.items() if v}
    if latency is None:
        latency = busy.get(4, max(busy.values()))
    return NodeCost(busy, units, latency, live, transient, min_warps)


def _kept_by_triton(target: Target, num_warps: int, cost: NodeCost) -> NodeCost:
    """`cost` with at least the warps Triton keeps for a region holding its register tensor:
    Triton sizes a region by its largest tensor, not by the plan (docs/dropin.md)."""
    kept = kept_warps(target, num_warps, max(cost.live_bytes, cost.transient_bytes))
    return replace(cost, min_warps=max(cost.min_warps, kept)) if kept > cost.min_warps else cost


def kept_warps(target: Target, num_warps: int, tensor_bytes: int) -> int:
    """The fewest warps Triton's `optimize_partition_warps` can leave a partition region that
    holds a register tensor of `tensor_bytes`: it starts every region at the kernel's warps
    and halves one while twice the tensor's registers, shared by the halved warps, fit an even
    share of the register file over all the kernel's warps. The share assumed here is the
    largest possible (the default region and this one only), so this is a lower bound."""
    if not tensor_bytes:
        return 1
    threads = target.threads_per_warp
    doubled = 2 * ceil(tensor_bytes / 4)  # Triton: twice the largest tensor's 32-bit registers
    warps = num_warps
    while warps > 1:
        half = warps // 2
        share = target.registers_per_sm // threads // (num_warps + half)
        if doubled // threads // half > share:
            break
        warps = half
    return warps


def region_warps(table: CostTable, members: Iterable[int]) -> int:
    """The fewest warps Triton's `optimize_partition_warps` can leave the partition region
    that runs `members` (`kept_warps` of its largest register tensor, from the kernel's
    warps): a plan's warps do not reach the binary, Triton sizes each region itself
    (docs/dropin.md, "Why warps don't reach the binary")."""
    largest = max(
        (max(table.nodes[n].live_bytes, table.nodes[n].transient_bytes) for n in members),
        default=0,
    )
    return kept_warps(table.target, table.graph.num_warps, largest)


# Registers a thread receives per `tcgen05.ld` message of a tmem_load that needs more than one:
# Triton's TensorMemoryToLLVM (`getVec`) uses at most half of maxnreg per message, and a
# quarter when maxnreg is 256 (the default, and the module's under warp specialization) and
# the tile needs more than half: 64. A tile of at most 128 registers a thread is one message.
TMEM_MESSAGE_REGISTERS = 64
TMEM_ONE_MESSAGE_REGISTERS = 128


# Views Triton lowers to the operand's own register values, re-indexed (its ViewOpToLLVM:
# tt.trans keeps the source encoding's registers; a tt.reshape that needs data movement gets a
# convert_layout of its own), so they add no registers beyond the tensor they view.
REGISTER_VIEWS = frozenset({"tt.reshape", "tt.trans"})


def _tmem_tile_source(graph: LoopGraph, node_id: int) -> int | None:
    """The tmem_load whose tile the node is, seen through register views; None if none."""
    node = graph.nodes[node_id]
    while node.op_name in REGISTER_VIEWS:
        sources = [e.src for e in graph.in_edges(node.id) if e.value_kind == "tensor"]
        if len(sources) != 1:
            return None
        node = graph.nodes[sources[0]]
    return node.id if node.op_name == TMEM_LOAD else None


def tmem_load_held_bytes(target: Target, num_warps: int, tile_bytes: int) -> int:
    """Register bytes a tmem_load holds at once (its transient), for a tile of `tile_bytes`
    over the kernel's `num_warps` (the warps Triton keeps for a region holding the tile,
    `kept_warps`; fewer only raise the per-thread count): the whole tile when it is one
    message, else one message. ptxas retires the messages one at a time into the tile's
    consumers: compiled for sm_100 on the CPU, the unspecialized persistent 4-warp
    128x256x64 GEMM whose 128x256 fp32 tile (256 registers a thread, one
    `tcgen05.wait::ld` after four x64 messages) is only truncated and stored takes 214
    (Triton 3.6) / 217 (3.9) registers without a spill, and stock 3.9's specialized kernel
    255 without a spill (docs/blackwell-evidence.md). The consumers still count at their own
    size (an f32 `addf` on the tile: the whole tile)."""
    threads = target.threads_per_warp * num_warps
    if not threads or tile_bytes <= 4 * threads * TMEM_ONE_MESSAGE_REGISTERS:
        return tile_bytes
    return 4 * threads * TMEM_MESSAGE_REGISTERS


def _mma_key(operand_type: str) -> str:
    return "f32" if operand_type in ("f32", "tf32") else operand_type


def _register_result_bytes(graph: LoopGraph, node_id: int) -> int:
    """Bytes of register tensors the node produces (a TMA load into shared memory has none)."""
    out = [e for e in graph.out_edges(node_id) if e.value_kind == "tensor"]
    if any(e.distance == 1 for e in out):
        return 0  # the new value of a carried tensor takes the old one's registers
    node = graph.nodes[node_id]
    if _lands_in_memory(node) and all(
        op_traits(graph.nodes[e.dst].op_name).allocates == "shared" for e in out
    ):
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
    traits = op_traits(node.op_name)
    if traits.unit != "smem":
        return 0
    if traits.from_registers:  # local_alloc, local_store
        sources = [graph.nodes[e.src] for e in graph.in_edges(node_id)]
        # An asynchronous load writes shared memory itself; only register data is copied.
        if any(_lands_in_memory(s) for s in sources):
            return 0
        return _operand_bytes(graph, node_id)
    if traits.reads:  # local_load
        return node.out_bytes
    return 2 * node.out_bytes  # a layout conversion: through shared memory and back


def _lands_in_memory(node) -> bool:
    """An asynchronous load (TMA, cp.async): its data lands in shared memory, not registers."""
    return node.kind == NodeKind.LOAD and op_traits(node.op_name).is_async


# -- channelled values ------------------------------------------------------------------------
def _consumers(graph: LoopGraph) -> dict[int, tuple[int, ...]]:
    """Nodes that need each node's results. Terminators are not consumers: the carried value
    travels on the edge to the iter-arg / if-result node instead."""
    out: dict[int, set[int]] = {n.id: set() for n in graph.nodes}
    for e in graph.edges:  # a set: a value used by 70,000 ops was quadratic as a list
        if graph.nodes[e.dst].role != NodeRole.TERMINATOR:
            out[e.src].add(e.dst)
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


# -- recurrences and buffers -----------------------------------------------------------------
def _recurrences(graph: LoopGraph, nodes) -> tuple[Recurrence, ...]:
    """For each back edge of the WS loop, the longest latency path iter arg ⇝ producer."""
    found = []
    for e in graph.edges:
        if e.distance != 1 or e.carried_by is not None:
            continue
        best = longest_paths(graph, e.dst, lambda m: nodes[m].latency)
        if e.src in best:
            found.append(Recurrence(e.src, e.value, e.dst, best[e.src]))
    return tuple(found)


def _buffers(graph: LoopGraph, target: Target):
    hoisted_smem = sum(
        b.bytes for b in graph.loop_buffers if not b.inside_loop and b.memory == "shared"
    )
    tmem_of = {
        b.name: _tmem_columns(target, b.bytes, b.elements)
        for b in graph.loop_buffers
        if _hoisted_tmem(b)
    }
    loop_smem, loop_tmem = {}, {}
    for n in graph.nodes:
        allocates = op_traits(n.op_name).allocates if n.role == NodeRole.OP else ""
        if allocates == "shared":
            loop_smem[n.id] = _allocated_bytes(n)
        elif allocates == "tensor":
            loop_tmem[n.id] = _tmem_columns(target, _allocated_bytes(n), _allocated_elements(n))
            tmem_of.update({b.name: loop_tmem[n.id] for b in _own_buffers(n)})
    return hoisted_smem, tmem_of, loop_smem, loop_tmem


def _hoisted_tmem(buffer) -> bool:
    return not buffer.inside_loop and buffer.memory == "tensor"


def _own_buffers(node) -> list:
    """The buffers an allocation op allocates (not other results it returns)."""
    names = set(node.label.split(", "))
    return [b for b in node.buffers if b.name in names]


def _allocated_bytes(node) -> int:
    """Bytes an allocation op allocates: its own buffers, else its results."""
    own = _own_buffers(node)
    return sum(b.bytes for b in own) if own else node.out_bytes


def _allocated_elements(node) -> int:
    """Elements an allocation op allocates (0 when its buffers do not say)."""
    return sum(b.elements for b in _own_buffers(node))


def _tmem_columns(target: Target, nbytes: int, elements: int = 0) -> int:
    """Columns of 128 lanes x 32 bits a buffer takes, rounded as the allocator rounds. An
    element takes a whole 32-bit cell: Triton stores 16-bit TMEM operands unpacked
    (``colStride = 1``; measured: attention_bwd d128's 128x64 f16 buffers take 64 columns,
    `benchmarks/results/2026-12-02-tmem-handoffs`), so a packed one is counted twice."""
    cells = max(ceil(nbytes / 4), elements)
    columns = max(1, ceil(cells / target.tmem_lanes))
    if not target.has_tmem:
        return columns
    return max(target.tmem_min_alloc_columns, 1 << (columns - 1).bit_length())

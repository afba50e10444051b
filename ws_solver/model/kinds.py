"""The op table: what each Triton op is, for partitioning purposes (`OPS`, `op_traits`), and
the kinds and roles of loop-graph nodes. Every layer asks here instead of naming ops."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class NodeKind(str, Enum):
    LOAD = "LOAD"  # descriptor load/gather; pointer tt.load feeding an MMA
    STORE = "STORE"  # descriptor store/scatter, tt.store, atomics
    MMA = "MMA"  # wgmma (sm_90) / tcgen05 (sm_100)
    TMEM = "TMEM"  # tensor-memory alloc/load/store/copy
    SFU = "SFU"  # special-function unit: exp2, log, sqrt, inline asm
    VIEW = "VIEW"  # layout or view change, no arithmetic
    REDUCE = "REDUCE"  # reductions and scans
    SCALAR = "SCALAR"  # index arithmetic and constants: cheap, may be duplicated
    NONE = "NONE"  # other elementwise tensor ops


class NodeRole(str, Enum):
    OP = "op"  # an operation of the loop body
    ITER_ARG = "iter_arg"  # a loop-carried value (also stands for the loop's result)
    IF_RESULT = "if_result"  # a result of an scf.if
    TERMINATOR = "terminator"  # scf.yield & co: runs wherever its region runs


@dataclass(frozen=True)
class OpTraits:
    """What ws_solver knows about one Triton op, for partitioning and costing."""

    kind: NodeKind | None = None  # None: SCALAR when it makes only scalars, else NONE
    unit: str = ""  # the SM unit its work loads (cost_table.UNITS); "": by kind, or none
    is_async: bool = False  # issued by one thread, its data lands in memory later
    tma: bool = False  # a TMA copy (through a tensor descriptor)
    reads: frozenset[str] = frozenset()  # memories it reads: "global", "shared", "tensor"
    writes: frozenset[str] = frozenset()  # memories it writes
    from_registers: bool = False  # writes register data into shared or tensor memory
    allocates: str = ""  # "shared" or "tensor": allocates a buffer there
    memdesc_view: bool = False  # its memdesc result views its memdesc operand 0
    accumulator_in_registers: bool = False  # an MMA that accumulates in registers (wgmma)
    pointer_operand: bool = False  # its operand 0 is a tensor of pointers
    rematerialized: bool = False  # Triton clones it into the partitions of its users
    combiner: bool = False  # has a region run per element (reductions and scans)
    region: bool = False  # a region op the graph gives value nodes (loop iter args, if results)
    control_flow: bool = False  # owns child ops; its work is in them
    terminator: bool = False  # ends a region (scf.yield & co)


_G, _S, _T = frozenset({"global"}), frozenset({"shared"}), frozenset({"tensor"})
_TMA_LOAD = OpTraits(NodeKind.LOAD, "memory", is_async=True, tma=True, reads=_G)
_TMA_TO_SHARED = OpTraits(NodeKind.LOAD, "memory", is_async=True, tma=True, reads=_G, writes=_S)
_TMA_STORE = OpTraits(NodeKind.STORE, "memory", is_async=True, tma=True, writes=_G)
_TMA_FROM_SHARED = OpTraits(NodeKind.STORE, "memory", is_async=True, tma=True, reads=_S, writes=_G)
_POINTER_STORE = OpTraits(NodeKind.STORE, "memory", writes=_G, pointer_operand=True)
_ATOMIC = OpTraits(NodeKind.STORE, "memory", reads=_G, writes=_G, pointer_operand=True)
_SFU = OpTraits(NodeKind.SFU, "sfu")
_VIEW = OpTraits(NodeKind.VIEW)
_MEMDESC_VIEW = OpTraits(NodeKind.VIEW, memdesc_view=True)
_REGION = OpTraits(NodeKind.NONE, control_flow=True, region=True)
_CONTROL_FLOW = OpTraits(NodeKind.NONE, control_flow=True)
_TERMINATOR = OpTraits(NodeKind.NONE, terminator=True)

# The one table. Unlisted ops are plain arithmetic: ALU work, no memory, SCALAR or NONE by
# their results.
OPS: dict[str, OpTraits] = {
    "tt.descriptor_load": _TMA_LOAD,
    "tt.descriptor_gather": _TMA_LOAD,
    "ttng.async_tma_copy_global_to_local": _TMA_TO_SHARED,
    "ttng.async_tma_gather": _TMA_TO_SHARED,
    "ttg.async_copy_global_to_local": OpTraits(
        NodeKind.LOAD, "memory", is_async=True, reads=_G, writes=_S, pointer_operand=True
    ),
    # A pointer load is LOAD only when its data reaches an MMA (dfg.py), else by its results.
    "tt.load": OpTraits(None, "memory", reads=_G, pointer_operand=True),
    "tt.descriptor_store": _TMA_STORE,
    "tt.descriptor_scatter": _TMA_STORE,
    "tt.descriptor_reduce": _TMA_STORE,
    "tt.store": _POINTER_STORE,
    "tt.atomic_rmw": _ATOMIC,
    "tt.atomic_cas": _ATOMIC,
    "ttng.async_tma_copy_local_to_global": _TMA_FROM_SHARED,
    "ttng.async_tma_reduce": _TMA_FROM_SHARED,
    "ttng.async_tma_scatter": _TMA_FROM_SHARED,
    "ttng.warp_group_dot": OpTraits(
        NodeKind.MMA, "tensor", is_async=True, reads=_S, accumulator_in_registers=True
    ),
    "ttng.tc_gen5_mma": OpTraits(NodeKind.MMA, "tensor", is_async=True, reads=_S, writes=_T),
    "ttng.tc_gen5_mma_scaled": OpTraits(NodeKind.MMA, "tensor", is_async=True, reads=_S, writes=_T),
    "tt.dot": OpTraits(NodeKind.MMA, "tensor", accumulator_in_registers=True),
    "tt.dot_scaled": OpTraits(NodeKind.MMA, "tensor", accumulator_in_registers=True),
    "ttng.tmem_alloc": OpTraits(NodeKind.TMEM, writes=_T, from_registers=True, allocates="tensor"),
    "ttng.tmem_load": OpTraits(NodeKind.TMEM, reads=_T),
    "ttng.tmem_store": OpTraits(NodeKind.TMEM, writes=_T, from_registers=True),
    "ttng.tmem_copy": OpTraits(NodeKind.TMEM, reads=_S, writes=_T),
    "ttng.tmem_subslice": OpTraits(NodeKind.TMEM, memdesc_view=True),
    **dict.fromkeys(
        [
            "math.exp2",
            "math.exp",
            "math.log",
            "math.log2",
            "math.sqrt",
            "math.rsqrt",
            "math.sin",
            "math.cos",
            "math.tanh",
            "math.erf",
            "tt.precise_sqrt",
            "tt.precise_divf",
            "tt.elementwise_inline_asm",
        ],
        _SFU,
    ),
    "ttg.memdesc_trans": _MEMDESC_VIEW,
    "ttg.memdesc_index": _MEMDESC_VIEW,
    "ttg.memdesc_subslice": _MEMDESC_VIEW,
    "ttg.memdesc_reshape": _MEMDESC_VIEW,
    "ttg.memdesc_reinterpret": _MEMDESC_VIEW,
    # A layout conversion shuffles registers through shared memory.
    "ttg.convert_layout": OpTraits(NodeKind.VIEW, "smem"),
    "ttg.local_alloc": OpTraits(
        NodeKind.VIEW, "smem", writes=_S, from_registers=True, allocates="shared"
    ),
    "ttg.local_load": OpTraits(NodeKind.VIEW, "smem", reads=_S),
    "ttg.local_store": OpTraits(NodeKind.VIEW, "smem", writes=_S, from_registers=True),
    "tt.broadcast": OpTraits(NodeKind.VIEW, rematerialized=True),
    "tt.expand_dims": OpTraits(NodeKind.VIEW, rematerialized=True),
    **dict.fromkeys(
        ["tt.reshape", "tt.trans", "tt.splat", "tt.join", "tt.split", "tt.unsplat"], _VIEW
    ),
    **dict.fromkeys(["tt.reduce", "tt.scan"], OpTraits(NodeKind.REDUCE, "alu", combiner=True)),
    "tt.histogram": OpTraits(NodeKind.REDUCE, "alu"),
    **dict.fromkeys(
        ["arith.constant", "tt.get_program_id", "tt.get_num_programs"], OpTraits(NodeKind.SCALAR)
    ),
    "tt.addptr": OpTraits(pointer_operand=True),
    "tt.advance": OpTraits(pointer_operand=True),
    "scf.for": _REGION,
    "scf.if": _REGION,
    **dict.fromkeys(["scf.while", "scf.execute_region", "scf.index_switch"], _CONTROL_FLOW),
    **dict.fromkeys(
        ["scf.yield", "tt.reduce.return", "tt.scan.return", "scf.condition"], _TERMINATOR
    ),
}
_PLAIN = OpTraits(unit="alu")


def op_traits(name: str) -> OpTraits:
    return OPS.get(name, _PLAIN)


TERMINATORS = frozenset(n for n, t in OPS.items() if t.terminator)
# Control-flow ops own child nodes; the work is in the children, so the op itself is NONE.
# (tt.reduce and tt.scan also have regions, but they are REDUCE: their combiner is per element.)
CONTROL_FLOW = frozenset(n for n, t in OPS.items() if t.control_flow)

# Ops some rule or coefficient singles out by name.
POINTER_LOAD = "tt.load"  # LOAD only when its data reaches an MMA (see dfg.py)
DESCRIPTOR_LOAD = "tt.descriptor_load"
ADDPTR = "tt.addptr"
LOCAL_ALLOC = "ttg.local_alloc"
TMEM_LOAD = "ttng.tmem_load"
TMEM_STORE = "ttng.tmem_store"
SCF_FOR = "scf.for"
SCF_IF = "scf.if"
SCF_YIELD = "scf.yield"


def is_tma_load(name: str) -> bool:
    """A TMA copy from global memory (the single-thread issue of a producer partition)."""
    t = op_traits(name)
    return t.tma and t.kind == NodeKind.LOAD


def op_kind(name: str, scalar_results_only: bool) -> NodeKind:
    """Kind of an op by name; unlisted ops are SCALAR when all they make is scalars.

    Terminators and control-flow ops are NONE. A pointer `tt.load` gets NONE or SCALAR here;
    the graph builder upgrades it to LOAD when its data reaches an MMA (dfg.py).
    """
    kind = op_traits(name).kind
    if kind is not None:
        return kind
    return NodeKind.SCALAR if scalar_results_only else NodeKind.NONE

"""Op kinds: the one table that says what each Triton op is, for partitioning purposes."""

from __future__ import annotations

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


_OP_KINDS: dict[str, NodeKind] = {
    **dict.fromkeys(
        [
            "tt.descriptor_load",
            "tt.descriptor_gather",
            "ttng.async_tma_copy_global_to_local",
            "ttng.async_tma_gather",
            "ttg.async_copy_global_to_local",
        ],
        NodeKind.LOAD,
    ),
    **dict.fromkeys(
        [
            "tt.descriptor_store",
            "tt.descriptor_scatter",
            "tt.descriptor_reduce",
            "tt.store",
            "tt.atomic_rmw",
            "tt.atomic_cas",
            "ttng.async_tma_copy_local_to_global",
            "ttng.async_tma_reduce",
            "ttng.async_tma_scatter",
        ],
        NodeKind.STORE,
    ),
    **dict.fromkeys(
        [
            "ttng.warp_group_dot",
            "ttng.tc_gen5_mma",
            "ttng.tc_gen5_mma_scaled",
            "tt.dot",
            "tt.dot_scaled",
        ],
        NodeKind.MMA,
    ),
    **dict.fromkeys(
        [
            "ttng.tmem_alloc",
            "ttng.tmem_load",
            "ttng.tmem_store",
            "ttng.tmem_copy",
            "ttng.tmem_subslice",
        ],
        NodeKind.TMEM,
    ),
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
        NodeKind.SFU,
    ),
    **dict.fromkeys(
        [
            "ttg.memdesc_trans",
            "ttg.memdesc_index",
            "ttg.memdesc_subslice",
            "ttg.memdesc_reshape",
            "ttg.memdesc_reinterpret",
            "ttg.convert_layout",
            "ttg.local_alloc",
            "ttg.local_load",
            "ttg.local_store",
            "tt.broadcast",
            "tt.expand_dims",
            "tt.reshape",
            "tt.trans",
            "tt.splat",
            "tt.join",
            "tt.split",
            "tt.unsplat",
        ],
        NodeKind.VIEW,
    ),
    **dict.fromkeys(["tt.reduce", "tt.scan", "tt.histogram"], NodeKind.REDUCE),
    **dict.fromkeys(
        ["arith.constant", "tt.get_program_id", "tt.get_num_programs"], NodeKind.SCALAR
    ),
}

TERMINATORS = frozenset({"scf.yield", "tt.reduce.return", "tt.scan.return", "scf.condition"})

# Control-flow ops own child nodes; the work is in the children, so the op itself is NONE.
# (tt.reduce and tt.scan also have regions, but they are REDUCE: their combiner is per element.)
CONTROL_FLOW = frozenset(
    {"scf.for", "scf.if", "scf.while", "scf.execute_region", "scf.index_switch"}
)

# Pointer loads count as LOAD only when their data reaches an MMA (see dfg.py).
POINTER_LOAD = "tt.load"


def op_kind(name: str, scalar_results_only: bool) -> NodeKind:
    """Kind of an op by name; unlisted ops are SCALAR when all they make is scalars.

    Terminators and control-flow ops are NONE. A pointer `tt.load` gets NONE or SCALAR here;
    the graph builder upgrades it to LOAD when its data reaches an MMA (dfg.py).
    """
    if name in TERMINATORS or name in CONTROL_FLOW:
        return NodeKind.NONE
    kind = _OP_KINDS.get(name)
    if kind is not None:
        return kind
    return NodeKind.SCALAR if scalar_results_only else NodeKind.NONE

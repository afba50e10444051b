"""`encode`: LoopGraph + Target -> CP-SAT model, built in named steps (see STEPS)."""

from __future__ import annotations

from time import perf_counter

from ..core.clock import NO_DEADLINE, Deadline
from ..model.cost_table import cost_table
from ..model.graph import LoopGraph
from ..model.target import Target
from . import constraints as c
from . import objective as o
from .variables import EncodeOptions, Encoding, new_encoding

# Build order: each step adds the named constraint group of its comment.
STEPS = (
    c.assign_nodes,  # assignment
    c.mark_used,  # partitions
    c.derive_membership,  # membership
    c.break_symmetry,  # symmetry
    c.choose_warps,  # warps
    c.fix_default_warps,  # default_warps
    c.choose_registers,  # registers
    c.route_channels,  # channels
    c.choose_depths,  # channel_depth
    c.choose_sources,  # channel_source
    c.limit_partitions,  # partition_count
    c.limit_warps,  # warp_budget
    c.require_min_warps,  # min_warps
    c.respect_lowering,  # lowering
    c.limit_register_need,  # register_need
    c.limit_register_file,  # register_file
    c.limit_barriers,  # mbarriers
    c.size_allocations,  # alloc_depth
    c.limit_shared_memory,  # shared_memory
    c.limit_tensor_memory,  # tensor_memory
    o.partition_busy,  # busy
    o.unit_load,  # units
    o.minimize_ii,  # recurrences, ii, and the objective
)


def encode(
    graph: LoopGraph,
    target: Target,
    options: EncodeOptions | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> Encoding:
    """The exact partitioning model of one loop; its objective equals `evaluate`'s. Raises
    OutOfTime when `deadline` passes between two steps."""
    start = perf_counter()
    options = options or EncodeOptions()
    enc = new_encoding(graph, target, cost_table(graph, target), options)
    for step in STEPS:
        deadline.check("building the exact model")
        step(enc)
    enc.built_s = perf_counter() - start
    return enc

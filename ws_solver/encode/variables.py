"""The Encoding of one loop: the CP-SAT model, its variable maps and its named constraint groups.

Index conventions: `n` a node id, `p`/`q` a partition (0..P-1, 0 is Triton's default region),
`k` a warp count from `table.warp_options`, `j` a channel depth (CHANNEL_DEPTHS), `u` a
producer and `v` the name of one of its values that other nodes need (`table.values`): a
channel is (u, v, q), one value into one partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from ..model.cost_table import CostTable
from ..model.graph import LoopGraph
from ..model.target import Target

Lit = cp_model.LiteralT

# Every constraint group, in build order (see build.STEPS).
GROUPS = (
    "assignment",
    "partitions",
    "membership",
    "symmetry",
    "warps",
    "default_warps",
    "registers",
    "channels",
    "channel_depth",
    "channel_source",
    "partition_count",
    "warp_budget",
    "min_warps",
    "lowering",
    "register_need",
    "register_file",
    "mbarriers",
    "alloc_depth",
    "shared_memory",
    "tensor_memory",
    "busy",
    "units",
    "recurrences",
    "ii",
)

# Groups that are limits rather than definitions: in assumption mode each gets one literal,
# so an infeasible loop can be explained by the limits it breaks.
LIMIT_GROUPS = (
    "partition_count",
    "default_warps",
    "warp_budget",
    "min_warps",
    "register_need",
    "register_file",
    "mbarriers",
    "shared_memory",
    "tensor_memory",
)


@dataclass(frozen=True)
class EncodeOptions:
    """Knobs of the encoding; the defaults are what `solve` uses."""

    max_partitions: int | None = None  # partitions the model offers (default: the target's)
    symmetry_breaking: bool = True  # order partitions 1..P-1 by their first node
    # The node order that ranks them (`symmetry_order`): "program" or "heaviest" first.
    symmetry_order: str = "program"
    # Nodes the lowering rules keep in one partition share their x literals (`shared_groups`).
    collapse: bool = True
    assumptions: bool = False  # guard each limit group by one assumption literal


@dataclass
class Encoding:
    """A CpModel for one loop plus every variable a decoder or a hint needs."""

    graph: LoopGraph
    target: Target
    table: CostTable
    options: EncodeOptions
    model: cp_model.CpModel
    partitions: int  # P: partition ids the model may use
    true: cp_model.IntVar
    x: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # (n, p)
    member: dict[tuple[int, int], Lit] = field(default_factory=dict)  # (n, p), every node
    used: list[cp_model.IntVar] = field(default_factory=list)
    warps: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # (p, k)
    reg_steps: list[cp_model.IntVar] = field(default_factory=list)  # setmaxnreg / step
    reg_total: cp_model.IntVar | None = None  # sum of reg_steps when specialized, else 0
    channel: dict[tuple[int, str, int], cp_model.IntVar] = field(default_factory=dict)  # u,v,q
    depths: dict[tuple[int, str], tuple[int, ...]] = field(default_factory=dict)  # offered
    depth: dict[tuple[int, str, int, int], cp_model.IntVar] = field(
        default_factory=dict
    )  # (u, v, q, j)
    # Which copy of a producer sends each channel: `source` (u, v, q, p) for producers that
    # may run in several partitions; for the others `send_busy` (u, p) = the producer-side
    # busy cycles of the channels u sends from p (it sends from where it runs).
    source: dict[tuple[int, str, int, int], cp_model.IntVar] = field(default_factory=dict)
    send_busy: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    alloc_depth: dict[int, cp_model.IntVar] = field(default_factory=dict)  # in-loop allocs
    exactly: dict[tuple[int, int], Lit] = field(default_factory=dict)  # (n, p): only in p
    busy: list[cp_model.IntVar] = field(default_factory=list)
    units: dict[str, cp_model.IntVar] = field(default_factory=dict)
    ii: cp_model.IntVar | None = None
    objective: cp_model.LinearExprT = 0
    groups: dict[str, list] = field(default_factory=dict)
    guards: dict[str, cp_model.IntVar] = field(default_factory=dict)
    built_s: float = 0.0  # wall seconds `encode` took

    @property
    def multi(self) -> Lit:
        """True when at least two partitions are used (the plan is specialized)."""
        return self.used[1] if self.partitions > 1 else ~self.true

    def add(self, group: str, constraint: cp_model.Constraint, *enforce: Lit):
        """Record `constraint` in `group`, enforced by `enforce` (and the group's guard)."""
        if group not in self.groups:
            raise KeyError(f"unknown constraint group {group!r}")
        guard = self.guards.get(group)
        literals = [*enforce, guard] if guard is not None else list(enforce)
        if literals:
            constraint.only_enforce_if(literals)
        self.groups.setdefault(group, []).append(constraint)
        return constraint

    def bool(self, name: str) -> cp_model.IntVar:
        return self.model.new_bool_var(name)

    def any_of(self, group: str, literals: list[Lit], name: str) -> Lit:
        """A literal equal to OR(literals)."""
        if len(literals) == 1:
            return literals[0]
        if not literals:
            return ~self.true
        b = self.bool(name)
        self.add(group, self.model.add_bool_or(literals), b)
        for lit in literals:
            self.add(group, self.model.add_implication(lit, b))
        return b

    def all_of(self, group: str, literals: list[Lit], name: str) -> Lit:
        """A literal equal to AND(literals)."""
        if len(literals) == 1:
            return literals[0]
        b = self.bool(name)
        self.add(group, self.model.add_bool_and(literals), b)
        self.add(group, self.model.add_bool_or([~lit for lit in literals]), ~b)
        return b

    def depth_of(self, u: int, v: str, q: int) -> cp_model.LinearExprT:
        """Stages of channel (u, v, q); 0 when there is no such channel."""
        return cp_model.LinearExpr.sum([j * self.depth[u, v, q, j] for j in self.depths[u, v]])


def new_encoding(graph: LoopGraph, target: Target, table: CostTable, options: EncodeOptions):
    """An empty Encoding; in assumption mode, one guard literal per limit group."""
    model = cp_model.CpModel()
    model.name = graph.name
    partitions = options.max_partitions or target.max_partitions
    enc = Encoding(graph, target, table, options, model, partitions, model.new_constant(1))
    enc.groups = {g: [] for g in GROUPS}
    if options.assumptions:
        enc.guards = {g: model.new_bool_var(f"assume[{g}]") for g in LIMIT_GROUPS}
    return enc

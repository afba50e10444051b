"""Build the LoopGraph of each warp-specialized loop from a parsed module."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Module, Op, Value
from ..ir.types import MEMDESC, TENSOR
from .graph import Buffer, Edge, LoopGraph, MmaShape, Node
from .kinds import (
    POINTER_LOAD,
    SCF_FOR,
    SCF_IF,
    SCF_YIELD,
    TERMINATORS,
    NodeKind,
    NodeRole,
    op_kind,
    op_traits,
)
from .traverse import reaches

WS_ATTR = "tt.warp_specialize"


@dataclass(frozen=True)
class WSLoop:
    """An `scf.for` carrying `tt.warp_specialize`, with where it sits in the module."""

    op: Op
    index: int
    kernel: str


def ws_loops(module: Module) -> list[WSLoop]:
    """Outermost loops tagged `tt.warp_specialize`, in textual order."""
    loops = []
    for op in module.walk():
        if op.name != SCF_FOR or not op.has_attr(WS_ATTR):
            continue
        if any(a.name == SCF_FOR and a.has_attr(WS_ATTR) for a in op.ancestors()):
            continue
        kernel = next((a.symbol for a in op.ancestors() if a.symbol), "")
        loops.append(WSLoop(op, len(loops), kernel))
    return loops


def build_graphs(module: Module) -> list[LoopGraph]:
    return [build_graph(module, loop) for loop in ws_loops(module)]


def build_graph(module: Module, loop: WSLoop) -> LoopGraph:
    return _Builder(module, loop).build()


class _Builder:
    def __init__(self, module: Module, loop: WSLoop) -> None:
        self.module = module
        self.loop = loop
        self.ops = list(loop.op.walk())[1:]
        self.op_index = {id(op): i for i, op in enumerate(self.ops)}
        self.nodes: list[dict] = []
        self.edges: list[Edge] = []
        self.node_of_op: dict[int, int] = {}
        self.node_of_value: dict[int, int] = {}  # id(ir.Value) -> value-node id
        self.iter_nodes: dict[int, list[int]] = {}  # id(loop op) -> its iter-arg node ids
        self.if_nodes: dict[int, list[int]] = {}  # id(if op) -> its result node ids

    # -- nodes --------------------------------------------------------------------------
    def build(self) -> LoopGraph:
        self.add_iter_args(self.loop.op, parent=None)
        for op in self.ops:
            self.add_op(op)
        for op in self.ops:
            self.add_edges(op)
        self.classify_pointer_loads()
        nodes = tuple(Node(**n) for n in self.nodes)
        module_op = self.module.ops[0] if self.module.ops else None
        buffers = {b.name: b for n in nodes for b in n.buffers}
        return LoopGraph(
            kernel=self.loop.kernel,
            loop_index=self.loop.index,
            target=str(module_op.attr("ttg.target", "")) if module_op else "",
            num_warps=int(module_op.attr("ttg.num-warps", 4)) if module_op else 4,
            line=self.loop.op.line,
            nodes=nodes,
            edges=tuple(self.edges),
            loop_buffers=tuple(buffers[k] for k in sorted(buffers)),
            scheduled_max_stage=int(self.loop.op.attr("tt.scheduled_max_stage", 0) or 0),
        )

    def new_node(self, **fields) -> int:
        fields["id"] = len(self.nodes)
        self.nodes.append(fields)
        return fields["id"]

    def parent_node(self, op: Op) -> int | None:
        parent = op.parent_op
        return None if parent is self.loop.op else self.node_of_op[id(parent)]

    def add_iter_args(self, loop_op: Op, parent: int | None) -> None:
        op_index = self.op_index.get(id(loop_op), -1)
        ids = []
        for k, arg in enumerate(loop_op.body.arguments[1:]):
            node = self.value_node(NodeRole.ITER_ARG, loop_op, op_index, k, arg, parent)
            self.node_of_value[id(arg)] = node
            if k < len(loop_op.results) and loop_op is not self.loop.op:
                self.node_of_value[id(loop_op.results[k])] = node
            ids.append(node)
        self.iter_nodes[id(loop_op)] = ids

    def value_node(
        self, role: NodeRole, op: Op, op_index: int, k: int, value, parent: int | None
    ) -> int:
        """A node for value `k` that `op` carries: a loop's iteration argument or an if's
        result."""
        return self.new_node(
            role=role,
            kind=NodeKind.NONE,
            op_name=op.name,
            label=value.name,
            op_index=op_index,
            result_index=k,
            parent=parent,
            value_kind=value.type.kind,
            elements=value.type.num_elements if value.type.kind in (TENSOR, MEMDESC) else 0,
            out_bytes=value.type.bytes,
            line=op.line,
        )

    def add_op(self, op: Op) -> None:
        parent = self.parent_node(op)
        parent_is_reduce = parent is not None and self.nodes[parent]["kind"] == NodeKind.REDUCE
        tensors = [v.type for v in op.results if v.type.kind in (TENSOR, MEMDESC)]
        role = NodeRole.TERMINATOR if op.name in TERMINATORS else NodeRole.OP
        kind = op_kind(op.name, scalar_results_only=not tensors)
        node = self.new_node(
            role=role,
            kind=kind,
            op_name=op.name,
            label=", ".join(v.name for v in op.results) or op.name,
            op_index=self.op_index[id(op)],
            parent=parent,
            follows_parent=parent_is_reduce or (parent is not None and self.follows(parent)),
            elements=max((t.num_elements for t in tensors), default=0),
            out_bytes=sum(v.type.bytes for v in op.results),
            io_bytes=self.io_bytes(op, kind),
            mma=mma_shape(op) if kind == NodeKind.MMA else None,
            buffers=self.buffers(op),
            stage=_int_or_none(op.attr("loop.stage")),
            cluster=_int_or_none(op.attr("loop.cluster")),
            line=op.line,
            location=self.module.source_location(op),
        )
        self.node_of_op[id(op)] = node
        for v in op.results:
            self.node_of_value.setdefault(id(v), node)
        if op.name == SCF_FOR:
            self.add_iter_args(op, parent=node)
        elif op.name == SCF_IF:
            ids = []
            for k, v in enumerate(op.results):
                ids.append(
                    self.value_node(NodeRole.IF_RESULT, op, self.op_index[id(op)], k, v, parent)
                )
                self.node_of_value[id(v)] = ids[-1]
            self.if_nodes[id(op)] = ids

    def follows(self, node_id: int) -> bool:
        return bool(self.nodes[node_id].get("follows_parent"))

    def io_bytes(self, op: Op, kind: NodeKind) -> int:
        if kind == NodeKind.LOAD or op.name == POINTER_LOAD:
            return sum(v.type.bytes for v in op.results if v.type.kind == TENSOR)
        if kind == NodeKind.STORE:
            stored = [
                v.type
                for v in op.operands
                if v.type.kind in (TENSOR, MEMDESC) and not v.type.element.startswith("!tt.ptr")
            ]
            stored = [t for t in stored if t.element != "i1"]  # masks are not data
            return max((t.bytes for t in stored), default=0)
        return 0

    def buffers(self, op: Op) -> tuple[Buffer, ...]:
        found: dict[str, Buffer] = {}
        for v in [*op.operands, *op.results]:
            if v.type.kind == MEMDESC:
                root = root_allocation(v)
                root_op = root.defining_op
                inside = root_op is not None and id(root_op) in self.op_index
                found[root.name] = Buffer(
                    root.name, root.type.memory, root.type.bytes, inside, root.type.num_elements
                )
        return tuple(found[k] for k in sorted(found))

    # -- edges --------------------------------------------------------------------------
    def producer(self, value: Value) -> int | None:
        """Node that defines `value` inside the loop; None for outside values and IVs."""
        node = self.node_of_value.get(id(value))
        if node is not None:
            return node
        op = value.defining_op
        return self.node_of_op.get(id(op)) if op is not None else None

    def add_edges(self, op: Op) -> None:
        index = self.op_index[id(op)]
        dst = self.node_of_op[id(op)]
        parent = op.parent_op
        inits_from = len(op.operands) - len(op.results) if op.name == SCF_FOR else None
        for k, value in enumerate(op.operands):
            src = self.producer(value)
            if src is None:
                continue
            if inits_from is not None and k >= inits_from:
                target = self.iter_nodes[id(op)][k - inits_from]
                self.edge(src, target, value, 0, use=(index, k))
                continue
            self.edge(src, dst, value, 0, use=(index, k))
            if op.name != SCF_YIELD or parent is None:
                continue
            if parent.name == SCF_FOR:
                carried = None if parent is self.loop.op else self.node_of_op[id(parent)]
                self.edge(src, self.iter_nodes[id(parent)][k], value, 1, carried_by=carried)
            elif parent.name == SCF_IF:
                self.edge(src, self.if_nodes[id(parent)][k], value, 0)

    def edge(self, src, dst, value: Value, distance, use=None, carried_by=None) -> None:
        t = value.type
        self.edges.append(
            Edge(
                src=src,
                dst=dst,
                distance=distance,
                value=value.name,
                value_kind=t.kind,
                bytes=t.bytes,
                elements=t.num_elements if t.kind in (TENSOR, MEMDESC) else 0,
                memory=t.memory,
                carried_by=carried_by,
                use=use,
            )
        )

    def classify_pointer_loads(self) -> None:
        """A pointer `tt.load` is a LOAD when its data reaches an MMA in the same iteration.

        "Reaches" follows distance-0 edges through views, plain elementwise ops, tensor-memory
        writes (so sm_90 and sm_100 agree: `local_alloc` there, `tmem_alloc` here) and value
        nodes (`scf.if` results, inner-loop iter args); it stops at any other kind of op
        (SFU, REDUCE, LOAD, ...) and at terminators.
        """
        out: dict[int, list[int]] = {}
        for e in self.edges:
            if e.distance == 0:
                out.setdefault(e.src, []).append(e.dst)
        nodes = self.nodes
        passthrough = (NodeKind.VIEW, NodeKind.NONE)

        def passes(n: int) -> bool:
            node = nodes[n]
            if node["role"] in (NodeRole.ITER_ARG, NodeRole.IF_RESULT):
                return True
            # Tensor-memory writes put register data where an sm_100 MMA reads it: the
            # counterpart of `ttg.local_alloc` (a VIEW), so data flows through them too.
            return node["role"] == NodeRole.OP and (
                node["kind"] in passthrough or "tensor" in op_traits(node["op_name"]).writes
            )

        for node in nodes:
            if node["op_name"] == POINTER_LOAD and reaches(
                out, node["id"], lambda n: nodes[n]["kind"] == NodeKind.MMA, passes
            ):
                node["kind"] = NodeKind.LOAD


def root_allocation(value: Value) -> Value:
    """Follow memdesc views back to the value that allocated the memory."""
    seen = 0
    while seen < 64:
        op = value.defining_op
        if op is None or not op_traits(op.name).memdesc_view or not op.operands:
            return value
        value = op.operands[0]
        seen += 1
    return value


def mma_shape(op: Op) -> MmaShape | None:
    if len(op.operands) < 2:
        return None
    a, b = op.operands[0].type, op.operands[1].type
    if len(a.shape) < 2 or len(b.shape) < 2:
        return None
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    return MmaShape(m, n, k, a.element, op_traits(op.name).accumulator_in_registers)


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None

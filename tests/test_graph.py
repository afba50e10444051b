"""LoopGraph invariants on every loop of the corpus, plus exact expectations for gemm_tma.

The invariants are checked against the parsed IR directly (not against the builder's own
bookkeeping): every op of the loop is one node, every SSA use of a loop-defined value is one
edge, loop-carried and `scf.if` values are value nodes with the right edges, kinds follow the
op table.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.model import (
    LoopGraph,
    NodeKind,
    NodeRole,
    WSLoop,
    build_graph,
    op_kind,
    ws_loops,
)
from ws_solver.model.kinds import TERMINATORS

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
FILES = sorted(p.name for p in CORPUS.glob("*.ttgir"))
INDEX = {e["file"]: e for e in json.loads((CORPUS / "index.json").read_text())}
VALUE_ROLES = (NodeRole.ITER_ARG, NodeRole.IF_RESULT)


@cache
def _load(name: str) -> tuple[ir.Module, tuple[tuple[WSLoop, LoopGraph], ...]]:
    module = ir.parse((CORPUS / name).read_text())
    return module, tuple((loop, build_graph(module, loop)) for loop in ws_loops(module))


def _loops(name: str) -> tuple[tuple[WSLoop, LoopGraph], ...]:
    return _load(name)[1]


def _body_ops(loop: WSLoop) -> list[ir.Op]:
    return list(loop.op.walk())[1:]


def _is_sm90(name: str) -> bool:
    return name.endswith(".sm90.ttgir")


class _Expect:
    """What the graph of one loop must contain, computed from the IR alone."""

    def __init__(self, loop: WSLoop, graph: LoopGraph) -> None:
        self.loop, self.graph = loop, graph
        self.ops = _body_ops(loop)
        self.index = {id(op): i for i, op in enumerate(self.ops)}
        self.loops = [loop.op] + [op for op in self.ops if op.name == "scf.for"]
        self.loop_ids = {id(op) for op in self.loops}
        self.op_node = {n.op_index: n for n in graph.nodes if n.role not in VALUE_ROLES}

    def is_iter_arg(self, value: ir.Value) -> bool:
        block = value.owner
        if isinstance(block, ir.Op) or value.index == 0:  # op result, or induction variable
            return False
        region = block.parent
        owner = region.parent if region is not None else None
        return owner is not None and id(owner) in self.loop_ids and block is owner.body

    def defined_inside(self, value: ir.Value) -> bool:
        op = value.defining_op
        return (op is not None and id(op) in self.index) or self.is_iter_arg(value)

    def value_node(self, role: NodeRole, op_index: int, result_index: int):
        found = [
            n
            for n in self.graph.nodes
            if n.role == role and n.op_index == op_index and n.result_index == result_index
        ]
        assert len(found) == 1, (role, op_index, result_index, found)
        return found[0]

    def producer(self, value: ir.Value) -> int:
        """Node id the builder must use as the source of an edge carrying `value`."""
        if self.is_iter_arg(value):
            owner = value.owner.parent.parent
            return self.value_node(
                NodeRole.ITER_ARG, self.index.get(id(owner), -1), value.index - 1
            ).id
        op = value.defining_op
        if op.name == "scf.if":
            return self.value_node(NodeRole.IF_RESULT, self.index[id(op)], value.index).id
        if op.name == "scf.for":  # an inner loop's result is its iter-arg node
            return self.value_node(NodeRole.ITER_ARG, self.index[id(op)], value.index).id
        return self.op_node[self.index[id(op)]].id

    def node_of(self, op: ir.Op) -> int:
        return self.op_node[self.index[id(op)]].id


def _all_loops():
    for name in FILES:
        for loop, graph in _loops(name):
            yield name, loop, graph


@pytest.mark.parametrize("name", FILES)
def test_loops_match_the_index(name: str) -> None:
    entry = INDEX[name]
    loops = _loops(name)
    assert len(loops) == entry["ws_loops"]
    for k, (loop, graph) in enumerate(loops):
        assert loop.index == graph.loop_index == k
        assert graph.kernel and graph.kernel == loop.kernel
        assert graph.target == ("cuda:90" if entry["target"] == "sm90" else "cuda:100")
        assert graph.num_warps == entry["num_warps"]
        assert graph.line == loop.op.line
        assert graph.name == f"{graph.kernel}#loop{k}"


@pytest.mark.parametrize("name", FILES)
def test_every_op_is_exactly_one_node(name: str) -> None:
    for loop, graph in _loops(name):
        ops = _body_ops(loop)
        assert [n.id for n in graph.nodes] == list(range(len(graph.nodes)))
        op_nodes = [n for n in graph.nodes if n.role in (NodeRole.OP, NodeRole.TERMINATOR)]
        assert sorted(n.op_index for n in op_nodes) == list(range(len(ops)))
        expect = _Expect(loop, graph)
        for node in op_nodes:
            op = ops[node.op_index]
            assert node.op_name == op.name
            assert node.line == op.line
            is_terminator = op.name in TERMINATORS
            assert node.role == (NodeRole.TERMINATOR if is_terminator else NodeRole.OP)
            parent = op.parent_op
            expected_parent = None if parent is loop.op else expect.node_of(parent)
            assert node.parent == expected_parent
            assert node.mma is None or node.kind == NodeKind.MMA


@pytest.mark.parametrize("name", FILES)
def test_every_inside_use_is_exactly_one_edge(name: str) -> None:
    for loop, graph in _loops(name):
        expect = _Expect(loop, graph)
        by_use = defaultdict(list)
        for e in graph.edges:
            if e.use is not None:
                by_use[e.use].append(e)
        modelled = 0
        for i, op in enumerate(expect.ops):
            for k, value in enumerate(op.operands):
                edges = by_use.get((i, k), [])
                if not expect.defined_inside(value):
                    # outside values, induction variables, combiner block arguments
                    assert edges == [], (op, k, value)
                    continue
                modelled += 1
                assert len(edges) == 1, (op, k, value, edges)
                (e,) = edges
                assert e.distance == 0
                assert e.value == value.name
                assert e.value_kind == value.type.kind
                assert e.bytes == value.type.bytes
                assert e.memory == value.type.memory
                assert e.src == expect.producer(value)
                inits_from = len(op.operands) - len(op.results)
                if op.name == "scf.for" and k >= inits_from:  # inner loop init → its iter arg
                    iter_arg = expect.value_node(NodeRole.ITER_ARG, i, k - inits_from)
                    assert e.dst == iter_arg.id
                else:
                    assert e.dst == expect.node_of(op)
        assert sum(len(v) for v in by_use.values()) == modelled


def test_some_uses_are_not_edges() -> None:
    """The corpus exercises each kind of use that must not become an edge."""
    seen = Counter()
    for _name, loop, graph in _all_loops():
        expect = _Expect(loop, graph)
        for op in expect.ops:
            for value in op.operands:
                if expect.defined_inside(value):
                    continue
                if value.defining_op is not None:
                    seen["outside"] += 1
                elif value.index == 0 and id(value.owner.parent.parent) in expect.loop_ids:
                    seen["induction variable"] += 1
                else:
                    seen["other block argument"] += 1
    assert seen["outside"] and seen["induction variable"] and seen["other block argument"]


@pytest.mark.parametrize("name", FILES)
def test_loop_carried_edges(name: str) -> None:
    for loop, graph in _loops(name):
        expect = _Expect(loop, graph)
        expected = Counter()
        for op in expect.ops:
            parent = op.parent_op
            if op.name != "scf.yield" or parent.name != "scf.for":
                continue
            loop_index = expect.index.get(id(parent), -1)
            carried_by = None if parent is loop.op else expect.node_of(parent)
            for k, value in enumerate(op.operands):
                if expect.defined_inside(value):
                    dst = expect.value_node(NodeRole.ITER_ARG, loop_index, k).id
                    expected[(expect.producer(value), dst, value.name, carried_by)] += 1
        carried = Counter(
            (e.src, e.dst, e.value, e.carried_by) for e in graph.edges if e.distance == 1
        )
        assert carried == expected
        assert all(v == 1 for v in carried.values())
        for e in graph.edges:
            assert e.distance in (0, 1)
            if e.distance == 1:
                assert e.use is None
                assert graph.node(e.dst).role == NodeRole.ITER_ARG
        # one ITER_ARG node per iter arg of the WS loop and of each inner scf.for
        for loop_op in expect.loops:
            iter_args = loop_op.body.arguments[1:]
            loop_index = expect.index.get(id(loop_op), -1)
            for k, arg in enumerate(iter_args):
                node = expect.value_node(NodeRole.ITER_ARG, loop_index, k)
                assert node.label == arg.name
                assert node.value_kind == arg.type.kind
                assert node.parent == (None if loop_op is loop.op else expect.node_of(loop_op))
        n_iter_args = sum(len(op.body.arguments) - 1 for op in expect.loops)
        assert len([n for n in graph.nodes if n.role == NodeRole.ITER_ARG]) == n_iter_args


@pytest.mark.parametrize("name", FILES)
def test_if_results(name: str) -> None:
    for loop, graph in _loops(name):
        expect = _Expect(loop, graph)
        ifs = [op for op in expect.ops if op.name == "scf.if"]
        if_results = [n for n in graph.nodes if n.role == NodeRole.IF_RESULT]
        assert len(if_results) == sum(len(op.results) for op in ifs)
        for op in ifs:
            i = expect.index[id(op)]
            yields = [region.blocks[-1].ops[-1] for region in op.regions if region.blocks]
            assert all(y.name == "scf.yield" for y in yields)
            for k, result in enumerate(op.results):
                node = expect.value_node(NodeRole.IF_RESULT, i, k)
                assert node.label == result.name
                assert node.parent == graph.node(expect.node_of(op)).parent
                incoming = Counter((e.src, e.distance, e.use) for e in graph.in_edges(node.id))
                expected = Counter(
                    (expect.producer(y.operands[k]), 0, None)
                    for y in yields
                    if expect.defined_inside(y.operands[k])
                )
                assert incoming == expected


def test_if_results_fed_by_both_branches() -> None:
    """The corpus has `scf.if` results fed by the yields of both branches (test_if_results
    checks which edge comes from which yield), and some fed by one branch only: the other
    yields a value defined outside the loop, which is no edge."""
    fed_by = Counter()
    for _name, _loop, graph in _all_loops():
        for node in graph.nodes:
            if node.role == NodeRole.IF_RESULT:
                fed_by[len(graph.in_edges(node.id))] += 1
    assert fed_by[2] >= 4 and fed_by[1] >= 1
    assert set(fed_by) <= {1, 2}


def _reaches_mma(graph: LoopGraph, start: int) -> bool:
    """Same-iteration data path from `start` to an MMA through non-computing nodes."""
    tmem_writes = {"ttng.tmem_alloc", "ttng.tmem_store", "ttng.tmem_copy"}
    seen, stack = {start}, [start]
    while stack:
        for e in graph.out_edges(stack.pop()):
            n = graph.node(e.dst)
            if e.distance or n.id in seen:
                continue
            seen.add(n.id)
            if n.kind == NodeKind.MMA:
                return True
            through = n.role in VALUE_ROLES or (
                n.role == NodeRole.OP
                and (n.kind in (NodeKind.VIEW, NodeKind.NONE) or n.op_name in tmem_writes)
            )
            if through:
                stack.append(n.id)
    return False


@pytest.mark.parametrize("name", FILES)
def test_kinds_follow_the_table(name: str) -> None:
    for loop, graph in _loops(name):
        ops = _body_ops(loop)
        for node in graph.nodes:
            if node.role in VALUE_ROLES:
                assert node.kind == NodeKind.NONE
                continue
            op = ops[node.op_index]
            scalar_only = not any(v.type.kind in ("tensor", "memdesc") for v in op.results)
            table = op_kind(op.name, scalar_only)
            if op.name == "tt.load":
                assert node.kind == (NodeKind.LOAD if _reaches_mma(graph, node.id) else table)
            else:
                assert node.kind == table, (op, node)


def test_pointer_load_kind_is_the_same_on_both_targets() -> None:
    """A pointer load is LOAD on sm_90 exactly when the same source load is LOAD on sm_100."""
    by_config = defaultdict(dict)
    for name, _loop, graph in _all_loops():
        config, arch = name.rsplit(".", 2)[0], name.rsplit(".", 2)[1]
        loads = {(n.location, n.kind) for n in graph.nodes if n.op_name == "tt.load"}
        by_config[(config, graph.loop_index)][arch] = loads
    pairs = [v for v in by_config.values() if len(v) == 2]
    assert len(pairs) == len(by_config)
    for loads in pairs:
        assert loads["sm90"] == loads["sm100"]
    assert any(k == NodeKind.LOAD for v in pairs for _, k in v["sm90"])
    assert any(k != NodeKind.LOAD for v in pairs for _, k in v["sm90"])


@pytest.mark.parametrize("name", FILES)
def test_mma_nodes(name: str) -> None:
    for _loop, graph in _loops(name):
        mmas = graph.of_kind(NodeKind.MMA)
        if name.startswith("row_reduce."):
            assert mmas == []
            continue
        assert mmas
        for node in mmas:
            assert node.mma is not None
            assert node.mma.m > 0 and node.mma.n > 0 and node.mma.k > 0
            assert node.mma.flops == 2 * node.mma.m * node.mma.n * node.mma.k > 0
            if _is_sm90(name):
                assert node.op_name == "ttng.warp_group_dot"
                assert node.mma.accumulator_in_registers
            else:
                assert node.op_name == "ttng.tc_gen5_mma"
                assert not node.mma.accumulator_in_registers
        for node in graph.nodes:
            assert (node.mma is not None) == (node.kind == NodeKind.MMA)


@pytest.mark.parametrize("name", FILES)
def test_views_are_consistent(name: str) -> None:
    for _loop, graph in _loops(name):
        g = graph.nx
        assert g.number_of_nodes() == len(graph.nodes)
        assert g.number_of_edges() == len(graph.edges)
        for node in graph.nodes:
            assert g.nodes[node.id]["node"] is node
            assert sorted(map(id, graph.out_edges(node.id))) == sorted(
                id(d["edge"]) for _, _, d in g.out_edges(node.id, data=True)
            )
            assert len(graph.in_edges(node.id)) == g.in_degree(node.id)
            for child in graph.children(node.id):
                assert graph.node(node.id).role == NodeRole.OP
                assert graph.node(node.id).op_name in ("scf.for", "scf.if", "tt.reduce")
                assert child.parent == node.id
        for e in graph.edges:
            assert 0 <= e.src < len(graph.nodes) and 0 <= e.dst < len(graph.nodes)
            assert e.bytes >= 0 and e.elements >= 0
            assert (e.memory != "") == (e.value_kind == "memdesc")
            assert (e.carried_by is not None) <= (e.distance == 1)
        assert len(list(graph.ops())) == sum(n.role == NodeRole.OP for n in graph.nodes)


def test_reduce_combiners_follow_their_reduce() -> None:
    found = 0
    for _name, _loop, graph in _all_loops():
        for node in graph.nodes:
            if node.op_name == "tt.reduce" and node.role == NodeRole.OP:
                children = graph.children(node.id)
                assert children and all(c.follows_parent for c in children)
                found += 1
    assert found


# -- exact expectations: gemm_tma on sm_90 --------------------------------------------------

GEMM_TMA_SM90 = [f for f in FILES if f.startswith("gemm_tma.") and _is_sm90(f)]


@pytest.mark.parametrize("name", GEMM_TMA_SM90)
def test_gemm_tma_sm90_exact(name: str) -> None:
    (tile,) = [p for p in name.split(".")[1].split("_") if p.startswith("t")]
    bm, bn, bk = (int(x) for x in tile[1:].split("x"))
    ((_loop, graph),) = _loops(name)
    assert graph.kernel == "gemm_tma_kernel"
    assert graph.scheduled_max_stage == INDEX[name]["num_stages"] - 1
    shape = [(n.role, n.kind, n.op_name) for n in graph.nodes]
    assert shape == [
        (NodeRole.ITER_ARG, NodeKind.NONE, "scf.for"),  # 0: the accumulator
        (NodeRole.OP, NodeKind.SCALAR, "arith.muli"),  # 1: off_k
        (NodeRole.OP, NodeKind.LOAD, "tt.descriptor_load"),  # 2: a
        (NodeRole.OP, NodeKind.VIEW, "ttg.local_alloc"),  # 3
        (NodeRole.OP, NodeKind.LOAD, "tt.descriptor_load"),  # 4: b
        (NodeRole.OP, NodeKind.VIEW, "ttg.local_alloc"),  # 5
        (NodeRole.OP, NodeKind.VIEW, "ttg.memdesc_trans"),  # 6: b^T
        (NodeRole.OP, NodeKind.MMA, "ttng.warp_group_dot"),  # 7
        (NodeRole.TERMINATOR, NodeKind.NONE, "scf.yield"),  # 8
    ]
    assert [n.op_index for n in graph.nodes] == [-1, 0, 1, 2, 3, 4, 5, 6, 7]
    assert graph.node(1).label == "%off_k"
    assert graph.node(2).label == "%a"
    assert graph.node(4).label == "%b"

    acc_bytes = bm * bn * 4
    a_bytes, b_bytes = bm * bk * 2, bn * bk * 2
    edges = sorted((e.src, e.dst, e.distance, e.value_kind, e.bytes, e.use) for e in graph.edges)
    assert edges == sorted(
        [
            (1, 2, 0, "scalar", 4, (1, 2)),  # off_k → load a (coordinate)
            (1, 4, 0, "scalar", 4, (3, 2)),  # off_k → load b
            (2, 3, 0, "tensor", a_bytes, (2, 0)),  # load → local_alloc
            (4, 5, 0, "tensor", b_bytes, (4, 0)),
            (5, 6, 0, "memdesc", b_bytes, (5, 0)),  # local_alloc → memdesc_trans
            (3, 7, 0, "memdesc", a_bytes, (6, 0)),  # → wgmma A
            (6, 7, 0, "memdesc", b_bytes, (6, 1)),  # → wgmma B
            (0, 7, 0, "tensor", acc_bytes, (6, 2)),  # accumulator in
            (7, 8, 0, "tensor", acc_bytes, (7, 0)),  # wgmma → yield
            (7, 0, 1, "tensor", acc_bytes, None),  # wgmma → accumulator, next iteration
        ]
    )
    mma = graph.node(7).mma
    assert (mma.m, mma.n, mma.k, mma.operand_type) == (bm, bn, bk, "f16")
    assert mma.accumulator_in_registers
    assert graph.node(7).buffers == tuple(sorted(graph.loop_buffers, key=lambda b: b.name))
    assert all(b.memory == "shared" and b.inside_loop for b in graph.loop_buffers)
    assert sorted(b.bytes for b in graph.loop_buffers) == sorted([a_bytes, b_bytes])
    assert graph.node(0).elements == bm * bn and graph.node(0).out_bytes == acc_bytes
    assert graph.node(2).io_bytes == a_bytes and graph.node(4).io_bytes == b_bytes
    # Triton's pipeliner put the loads in stage 0 and the MMA in the last stage
    assert graph.node(2).stage == graph.node(4).stage == 0
    assert graph.node(7).stage == graph.scheduled_max_stage
    assert graph.node(7).location.startswith("corpus/kernels/gemm_tma.py:")


def test_gemm_tma_sm100_accumulator_is_in_tensor_memory() -> None:
    name = "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
    ((_loop, graph),) = _loops(name)
    (mma,) = graph.of_kind(NodeKind.MMA)
    assert mma.op_name == "ttng.tc_gen5_mma" and not mma.mma.accumulator_in_registers
    iter_args = [n for n in graph.nodes if n.role == NodeRole.ITER_ARG]
    assert [n.value_kind for n in iter_args] == ["scalar", "token"]  # use_acc flag, token
    token = iter_args[1]
    carried = [e for e in graph.edges if e.distance == 1]
    assert [(e.src, e.dst, e.value_kind) for e in carried] == [(mma.id, token.id, "token")]
    tmem = [b for b in mma.buffers if b.memory == "tensor"]
    assert len(tmem) == 1 and tmem[0].bytes == 128 * 128 * 4 and not tmem[0].inside_loop

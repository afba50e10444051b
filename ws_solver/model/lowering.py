"""What Triton's warp-specialization lowering accepts, as data over a LoopGraph.

`lowering_rules(graph, target)` turns the rules of docs/triton-lowering-rules.md into plain
node/edge data that the CP-SAT encoder (encode/constraints.py, group "lowering"), the heuristic
and `lowering_violations` (behind `check_plan`) share. The rules were found on Triton 3.6.0;
what differs on 3.9.0 is a flag of `target.triton` (model/lowering_facts.py), marked below:

- R1 (sm_90, 3.6 only): a wgmma reading shared memory allocated before the loop runs in
  partition 0.
- R2, narrowed (sm_90): the wgmmas of a loop run in one partition.
- R3 (3.6 only): a pointer `tt.load`'s tensor (also through the `tt.broadcast` /
  `tt.expand_dims` chains Triton clones into their users, and the `local_alloc` staging it)
  is not consumed in a partition that does not produce it.
- R4 (sm_100): a TMEM access inside an `scf.if` in another partition than the MMA that owns
  the buffer: on 3.6 the MMA is partition 1 and the if's body partition 0; on 3.9 the if's
  body runs in one partition after the MMA's.
- R5: a value consumed in a partition `c` that does not produce it has a consumer that runs
  in exactly `{c}`; a consumer inside an `scf.if` counts as its outermost enclosing `scf.if`.
- R6: a TMA load's tile is not consumed by a `local_alloc` in a partition that does not
  run the load (it would cross as registers and be staged twice).
- R7 (sm_100): a TMEM buffer read in the loop is not owned by one non-default partition;
  on 3.9, widened, its MMA and its `tmem_load`s run in different partitions (partition 0
  holding the MMA is not the default region, and a third accessor elsewhere does not help).
- R10 (sm_100, 3.9): a TMEM buffer's `tmem_load`s and `tmem_store`s run in one partition,
  and with its MMAs in at most two.
- The inserted default partition (sm_100, 3.9): partition 0 holds no MMA and no TMA load,
  else Triton inserts a default partition the plan does not have and drops its registers.
- R13 (sm_100, 3.9): every `tt.reduce` runs in partition 0 only.
- R9 (sm_90), widened by measurement: register tensors do not cross partitions.
- R8: a memdesc view's result is not consumed in a partition that does not run the view.
- R11: a tensor of pointers is not consumed in a partition that does not produce it.
- R12 (sm_90), measured: a register tensor the warp-specialized loop carries (it leaves the
  loop as a result) and the ops that produce it run in partition 0.

Not a rule but a resource (T1): a TMEM buffer whose writers and tmem_loads a plan puts apart
takes two copies (`tmem_handoffs.py`), which the tensor-memory limit counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .graph import Edge, LoopGraph
from .kinds import (
    ADDPTR,
    DESCRIPTOR_LOAD,
    LOCAL_ALLOC,
    OPS,
    POINTER_LOAD,
    SCF_IF,
    TMEM_LOAD,
    TMEM_STORE,
    NodeKind,
    NodeRole,
    is_tma_load,
)
from .target import Target

# PartitionScheduling clones these into the partitions of their users.
REMATERIALIZED = frozenset(n for n, t in OPS.items() if t.rematerialized)
# The memdesc views R8 was measured on (NVWSInsertAref buffers allocations, not views).
MEMDESC_VIEWS = frozenset({"ttg.memdesc_trans", "ttg.memdesc_reshape", "ttg.memdesc_subslice"})

R3 = "R3 (pointer-load data cannot cross)"
R6 = "R6 (a TMA load and its local_alloc stay together)"
R8 = "R8 (memdesc views cannot cross)"
R9 = "R9 (on sm_90 register tensors do not cross)"
R11 = "R11 (pointer tensors cannot cross)"
# Ops whose operand 0 is a tensor of pointers.
POINTER_USERS = frozenset(n for n, t in OPS.items() if t.pointer_operand)
REDUCE = "tt.reduce"


@dataclass(frozen=True)
class Together:
    """`dst` runs only in partitions that run `src` (an edge whose value cannot cross)."""

    src: int
    dst: int
    rule: str  # R3, R6, R8, R9 or R11, as worded in messages


@dataclass(frozen=True)
class Crossing:
    """R5 for one edge: wherever `consumer` runs and `producer` does not, some node of
    `sites` runs in exactly that partition."""

    producer: int  # the edge's source, or the input of the cloned chain it ends
    consumer: int
    sites: tuple[int, ...]


@dataclass(frozen=True)
class TmemIf:
    """R4 for one TMEM access inside an `scf.if`: if `access` is not in `mma`'s partition,
    `mma` runs in partition 1 and every op of `body` in exactly partition 0 (3.6), or every op
    of `body` runs in one partition, the same for all, after `mma`'s (3.9)."""

    mma: int
    access: int
    region: int  # the scf.if
    body: tuple[int, ...]  # the if's ops (direct children)


@dataclass(frozen=True)
class TmemAccesses:
    """R10: one TMEM buffer's tmem_loads and tmem_stores (`accesses`, one partition) and its
    MMAs; together they span at most two partitions."""

    accesses: tuple[int, ...]
    mmas: tuple[int, ...]


@dataclass(frozen=True)
class LoweringRules:
    """The rules for one loop on one target, as node ids (empty: nothing to respect)."""

    default_only: frozenset[int] = frozenset()  # R1: nodes that run in partition 0 only
    loop_results: frozenset[int] = frozenset()  # R12: likewise, for the loop's results
    same_partition: tuple[int, ...] = ()  # R2 (narrowed): these nodes share one partition
    together: tuple[Together, ...] = ()  # R3, R6, R8, R9, R11
    crossings: tuple[Crossing, ...] = ()  # R5
    tmem_ifs: tuple[TmemIf, ...] = ()  # R4
    mma_before_if: bool = False  # R4 as on 3.9: the if's body after the MMA's partition
    tmem_owners: tuple[tuple[int, ...], ...] = ()  # R7: accessors of one TMEM buffer
    tmem_apart: tuple[tuple[int, int], ...] = ()  # R7 widened (3.9): (MMA, tmem_load) apart
    tmem_accesses: tuple[TmemAccesses, ...] = ()  # R10 (3.9): per TMEM buffer
    not_default: frozenset[int] = frozenset()  # MMAs and TMA loads: not in partition 0 (3.9)
    reduces: frozenset[int] = frozenset()  # R13: nodes that run in partition 0 only (3.9)
    triton: str = "3.6"  # the release the rules are of, as messages name it

    @property
    def pins_partition_1(self) -> bool:
        """Whether partition 1 means something (R4 on 3.6): partitions 1.. are not
        interchangeable."""
        return bool(self.tmem_ifs) and not self.mma_before_if

    @property
    def if_mmas(self) -> tuple[int, ...]:
        """The MMAs R4 on 3.9 orders before their ifs (the symmetry breaking ranks them
        first, so that partitions numbered in first-use order keep that order)."""
        if not self.mma_before_if:
            return ()
        return tuple(dict.fromkeys(t.mma for t in self.tmem_ifs))


def lowering_rules(graph: LoopGraph, target: Target) -> LoweringRules:
    """The rules `graph` is subject to on `target` (cached)."""
    return _rules(graph, target)


@cache
def _rules(graph: LoopGraph, target: Target) -> LoweringRules:
    tmem, facts = target.has_tmem, target.triton
    inserts = tmem and facts.inserts_default_partition
    return LoweringRules(
        default_only=default_only(graph, target) if facts.hoisted_wgmma_hangs else frozenset(),
        loop_results=loop_results(graph, target),
        same_partition=wgmmas(graph) if target.mma_accumulator_in_registers else (),
        together=(
            *(pointer_load_edges(graph) if facts.pointer_load_data_stays else ()),
            *tma_staging_edges(graph),
            *(register_tensor_edges(graph) if target.mma_accumulator_in_registers else ()),
            *view_edges(graph),
            *pointer_edges(graph),
        ),
        crossings=crossings(graph),
        tmem_ifs=tmem_ifs(graph) if tmem else (),
        mma_before_if=facts.mma_before_tmem_if,
        tmem_owners=tmem_owners(graph) if tmem else (),
        tmem_apart=tmem_apart(graph) if inserts else (),
        tmem_accesses=tmem_accesses(graph) if tmem and facts.tmem_accesses_together else (),
        not_default=issuers(graph) if inserts else frozenset(),
        reduces=reduces(graph) if tmem and facts.reduce_in_default else frozenset(),
        triton=facts.short,
    )


# -- the inserted default partition, R13 (3.9) -------------------------------------------------
def issuers(graph: LoopGraph) -> frozenset[int]:
    """MMAs and TMA loads: on 3.9 (sm_100) a partition 0 holding one is lowered behind an
    empty default partition Triton inserts, the plan's register requests not applied."""
    return frozenset(n.id for n in graph.ops() if n.kind == NodeKind.MMA or is_tma_load(n.op_name))


def reduces(graph: LoopGraph) -> frozenset[int]:
    """R13: `tt.reduce` ops. On 3.9 (sm_100) one outside partition 0 fails PartitionScheduling
    ("'tt.reduce' op partition ids in attr ttg.partition does not contain partition ids of
    all child ops"), even with its input and its consumer there (four probes of the
    attention d128 plan); conservative: one probe with the whole softmax renumbered lowered."""
    return frozenset(n.id for n in graph.ops() if n.op_name == REDUCE)


# -- R1 ----------------------------------------------------------------------------------------
def default_only(graph: LoopGraph, target: Target) -> frozenset[int]:
    """wgmmas reading shared memory allocated above the loop: Triton 3.6's sm_90 pipeliner
    never returns when such a wgmma runs outside the default region (R1)."""
    if not target.mma_accumulator_in_registers:
        return frozenset()
    return frozenset(
        n.id
        for n in graph.ops()
        if n.kind == NodeKind.MMA
        and any(not b.inside_loop and b.memory == "shared" for b in n.buffers)
    )


# -- R12 ---------------------------------------------------------------------------------------
def loop_results(graph: LoopGraph, target: Target) -> frozenset[int]:
    """Register tensors carried by the warp-specialized loop itself, and their producers
    (the sources of the back edges into them). They leave the loop as results, which the
    default region's code after the loop uses: on the H200 a GEMM whose wgmma and
    accumulator ran in partition 1, with a 24-register default region, ran 4.5x slower than
    unspecialized (plan sweep 2026-12-01, gemm_tma and gemm_fp8 with 4 warps), while the cost
    model saw the same II (R12)."""
    if not target.mma_accumulator_in_registers:
        return frozenset()
    found: set[int] = set()
    for node in graph.nodes:
        if node.role != NodeRole.ITER_ARG or node.parent is not None:
            continue
        if node.value_kind != "tensor":
            continue
        found.add(node.id)
        found |= {
            e.src for e in graph.in_edges(node.id) if e.distance == 1 and e.carried_by is None
        }
    return frozenset(found)


def wgmmas(graph: LoopGraph) -> tuple[int, ...]:
    """R2, narrowed: wgmmas split over partitions fail in Triton (NVWSInsertAref,
    ConvertTritonToTritonGPU) or in ws_solver's Hopper fix; one wgmma anywhere lowers."""
    found = tuple(n.id for n in graph.ops() if n.kind == NodeKind.MMA)
    return found if len(found) > 1 else ()


# -- R3, R8 ------------------------------------------------------------------------------------
def _consumed(graph: LoopGraph, node_id: int) -> list[Edge]:
    """Out edges into real consumers (terminators only forward a value)."""
    nodes = graph.nodes
    return [e for e in graph.out_edges(node_id) if nodes[e.dst].role != NodeRole.TERMINATOR]


def is_rematerialized(graph: LoopGraph, node_id: int) -> bool:
    node = graph.nodes[node_id]
    return node.role == NodeRole.OP and node.op_name in REMATERIALIZED


def chain_origin(graph: LoopGraph, node_id: int) -> int | None:
    """The value a broadcast / expand_dims chain starts from (the node itself when it is not
    such an op); None when the chain starts outside the loop."""
    seen = set()
    while is_rematerialized(graph, node_id) and node_id not in seen:
        seen.add(node_id)
        inputs = [e.src for e in graph.in_edges(node_id) if e.use and e.use[1] == 0]
        if not inputs:
            return None
        node_id = inputs[0]
    return node_id


def _is_tensor_pointer_load(graph: LoopGraph, node_id: int | None) -> bool:
    if node_id is None:
        return False
    node = graph.nodes[node_id]
    return node.role == NodeRole.OP and node.op_name == POINTER_LOAD and node.elements > 0


def pointer_load_edges(graph: LoopGraph) -> list[Together]:
    """R3: edges out of a tensor `tt.load`, out of a broadcast / expand_dims chain of one, or
    out of the `local_alloc` that stages one (Triton has no aref for cp.async data)."""
    found = []
    for n in graph.nodes:
        origin = chain_origin(graph, n.id)
        if n.role == NodeRole.OP and n.op_name == LOCAL_ALLOC:
            sources = [chain_origin(graph, e.src) for e in graph.in_edges(n.id)]
            staged = any(_is_tensor_pointer_load(graph, s) for s in sources)
        else:
            staged = False
        if _is_tensor_pointer_load(graph, origin) or staged:
            found += [Together(e.src, e.dst, R3) for e in _consumed(graph, n.id)]
    return _unique(found)


def tma_staging_edges(graph: LoopGraph) -> list[Together]:
    """R6: a TMA load and the `local_alloc` that puts its tile in shared memory. Apart, the
    tile crosses as registers and is staged through shared memory once more: Triton often
    fails on that (ReorderInstructions, NVWSInsertAref, hangs), and where it lowers the
    kernel ran 1.5x slower on the H200 (gemm_tma / gemm_fp8 t128x256, 2026-11-29 calibrated run)."""
    found = [
        Together(e.src, e.dst, R6)
        for e in graph.edges
        if graph.nodes[e.src].role == NodeRole.OP
        and graph.nodes[e.src].op_name == DESCRIPTOR_LOAD
        and graph.nodes[e.dst].role == NodeRole.OP
        and graph.nodes[e.dst].op_name == LOCAL_ALLOC
    ]
    return _unique(found)


def register_tensor_edges(graph: LoopGraph) -> list[Together]:
    """R9 (sm_90), widened by measurement: register tensors stay in the partition that
    computes them (a cheap producer is duplicated instead). Each sm_90 plan that sent one
    across lowered to a failure (ReorderInstructions on a wgmma's A operand), to a stage
    release the Hopper fix cannot place (causal attention d64), or to a slower kernel (the
    persistent GEMM's epilogue split, 3%): the H200 runs of 2026-11-29."""
    nodes = graph.nodes
    found = [
        Together(e.src, e.dst, R9)
        for e in graph.edges
        if e.value_kind == "tensor"
        and nodes[e.dst].role != NodeRole.TERMINATOR
        and nodes[e.src].role != NodeRole.TERMINATOR
    ]
    return _unique(found)


def view_edges(graph: LoopGraph) -> list[Together]:
    """R8: memdesc results of views (NVWSInsertAref buffers only allocations, not views)."""
    found = [
        Together(e.src, e.dst, R8)
        for e in graph.edges
        if e.value_kind == "memdesc"
        and graph.nodes[e.src].role == NodeRole.OP
        and graph.nodes[e.src].op_name in MEMDESC_VIEWS
        and graph.nodes[e.dst].role != NodeRole.TERMINATOR
    ]
    return _unique(found)


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))


# -- R5 ----------------------------------------------------------------------------------------
def use_site(graph: LoopGraph, node_id: int) -> int:
    """The node whose partitions Triton reads for a use by `node_id`: its outermost enclosing
    `scf.if` (a nested op's use counts as the if's), else the node itself."""
    nodes = graph.nodes
    site = node_id
    while nodes[site].parent is not None and nodes[nodes[site].parent].op_name == SCF_IF:
        site = nodes[site].parent
    return site


def exact_sites(graph: LoopGraph, node_id: int, seen: frozenset[int] = frozenset()) -> set[int]:
    """Nodes one of which must run in exactly the consumer partition: through ops that make a
    memdesc of their input (views, `tmem_alloc` of registers), their users count instead."""
    node = graph.nodes[node_id]
    views = [
        e
        for e in _consumed(graph, node_id)
        if e.value_kind == "memdesc" and not e.distance and e.dst not in seen
    ]
    if node.role == NodeRole.OP and views and node.op_name != LOCAL_ALLOC:
        found: set[int] = set()
        for e in views:
            found |= exact_sites(graph, e.dst, seen | {node_id})
        return found
    return {use_site(graph, node_id)}


def crossings(graph: LoopGraph) -> list[Crossing]:
    """R5, per edge that carries data (not a token) into a real consumer."""
    found = []
    for e in graph.edges:
        if e.value_kind == "token" or graph.nodes[e.dst].role == NodeRole.TERMINATOR:
            continue
        producer = chain_origin(graph, e.src)
        if producer is None or producer == e.dst:
            continue
        sites = tuple(sorted(exact_sites(graph, e.dst)))
        found.append(Crossing(producer, e.dst, sites))
    return _unique(found)


# -- R4, R7 ------------------------------------------------------------------------------------
def tmem_buffers(graph: LoopGraph) -> dict[str, list[int]]:
    """Tensor-memory buffer name -> the MMA / TMEM ops of the loop that access it."""
    found: dict[str, list[int]] = {}
    for n in graph.ops():
        if n.kind in (NodeKind.MMA, NodeKind.TMEM):
            for b in n.buffers:
                if b.memory == "tensor":
                    found.setdefault(b.name, []).append(n.id)
    return found


def tmem_ifs(graph: LoopGraph) -> list[TmemIf]:
    """R4: NVWSInsertTmemAref's workaround splits an scf.if holding a TMEM hand-off into ifs
    it numbers itself (partition 1: the MMA's; 0: the body)."""
    nodes = graph.nodes
    found = []
    for ops in tmem_buffers(graph).values():
        mmas = [n for n in ops if nodes[n].kind == NodeKind.MMA]
        for access in ops:
            parent = nodes[access].parent
            if nodes[access].kind != NodeKind.TMEM or parent is None:
                continue
            if nodes[parent].op_name != SCF_IF:
                continue
            body = tuple(c.id for c in graph.children(parent) if c.role == NodeRole.OP)
            found += [TmemIf(m, access, parent, body) for m in mmas]
    return _unique(found)


def tmem_owners(graph: LoopGraph) -> list[tuple[int, ...]]:
    """R7: accessors of each TMEM buffer read in the loop (a `tmem_load` among them). With one
    owner Triton keeps the async tokens loop-carried, and in a non-default partition their
    initial value is out of reach (RemoveTMEMTokens fails, or the process crashes)."""
    nodes = graph.nodes
    return [
        tuple(ops)
        for ops in tmem_buffers(graph).values()
        if any(nodes[n].op_name == TMEM_LOAD for n in ops)
    ]


def tmem_apart(graph: LoopGraph) -> list[tuple[int, int]]:
    """R7 widened (3.9): (MMA, tmem_load) pairs of one buffer. On 3.9 the persistent GEMM's
    plans with both in one partition failed RemoveTMEMTokens as R7 does, in partition 0 (it
    holds the MMA, so Triton inserts a default region before it) and in partition 1 with
    the buffer's tmem_alloc in partition 2."""
    nodes = graph.nodes
    found = []
    for ops in tmem_buffers(graph).values():
        loads = [n for n in ops if nodes[n].op_name == TMEM_LOAD]
        found += [(m, t) for m in ops if nodes[m].kind == NodeKind.MMA for t in loads]
    return _unique(found)


def tmem_accesses(graph: LoopGraph) -> list[TmemAccesses]:
    """R10: each TMEM buffer with loads or stores in the loop. PartitionScheduling asserts that
    a buffer's load and store partitions are the same, NVWSInsertTmemAref that at most two
    partitions use it."""
    nodes = graph.nodes
    found = []
    for ops in tmem_buffers(graph).values():
        accesses = tuple(n for n in ops if nodes[n].op_name in (TMEM_LOAD, TMEM_STORE))
        mmas = tuple(n for n in ops if nodes[n].kind == NodeKind.MMA)
        if accesses:
            found.append(TmemAccesses(accesses, mmas))
    return _unique(found)


# -- R11 ---------------------------------------------------------------------------------------
def pointer_edges(graph: LoopGraph) -> list[Together]:
    """R11: tensors of pointers (`tt.addptr` results, the pointer operand of loads, stores,
    atomics and `tt.addptr`). Staged through an aref they cannot be lowered: in a partition
    narrower than the kernel TritonGPUCoalesce asserts (no defining op), else make_llir fails
    ("'llvm.bitcast' op can only cast pointers"), after the lowering guard has passed."""
    nodes = graph.nodes
    found = []
    for e in graph.edges:
        src, dst = nodes[e.src], nodes[e.dst]
        if e.value_kind != "tensor" or dst.role == NodeRole.TERMINATOR:
            continue
        into_pointer = dst.role == NodeRole.OP and dst.op_name in POINTER_USERS
        from_addptr = src.role == NodeRole.OP and src.op_name == ADDPTR
        if from_addptr or (into_pointer and e.use is not None and e.use[1] == 0):
            found.append(Together(e.src, e.dst, R11))
    return _unique(found)


# -- checking a plan ---------------------------------------------------------------------------
def lowering_violations(graph: LoopGraph, plan, rules: LoweringRules | Target) -> list[str]:
    """One sentence per place where `plan` breaks a rule (empty: Triton should lower it)."""
    if isinstance(rules, Target):
        rules = lowering_rules(graph, rules)
    if not plan.specialized:
        return []
    parts = [set(p) for p in plan.assignment]

    def label(n: int) -> str:
        node = graph.nodes[n]
        return f"node {n} ({node.op_name} {node.label})"

    rule = f"Triton {rules.triton} lowering rule"
    out = _partition_0_violations(rules, parts, label, rule)
    homes = {tuple(sorted(parts[n])) for n in rules.same_partition}
    if len(homes) > 1:
        out.append(
            f"the wgmmas {', '.join(label(n) for n in rules.same_partition)} run in partitions "
            f"{sorted(homes)}: {rule} R2 (narrowed: wgmmas share one partition)"
        )
    for t in rules.together:
        extra = parts[t.dst] - parts[t.src]
        if extra:
            out.append(
                f"{label(t.src)} is consumed by {label(t.dst)} in partitions {sorted(extra)} "
                f"it does not run in: {rule} {t.rule}"
            )
    for c in rules.crossings:
        for p in sorted(parts[c.consumer] - parts[c.producer]):
            if not any(parts[s] == {p} for s in c.sites):
                out.append(
                    f"{label(c.producer)} crosses into partition {p} for {label(c.consumer)}, "
                    f"but no consumer runs in exactly partition {p}: {rule} "
                    "R5 (a crossing value needs a consumer in exactly that partition)"
                )
    out += _tmem_violations(rules, parts, label, rule)
    return out


def _partition_0_violations(rules: LoweringRules, parts, label, rule: str) -> list[str]:
    """R1, R12, R13 (nodes that run in partition 0) and the inserted default partition
    (nodes that do not)."""
    out = []
    for n in sorted(rules.default_only):
        if parts[n] != {0}:
            out.append(
                f"{label(n)} reads shared memory allocated before the loop and must run in "
                f"partition 0: {rule} R1"
            )
    for n in sorted(rules.loop_results - rules.default_only):
        if parts[n] != {0}:
            out.append(
                f"{label(n)} carries or produces a register tensor that leaves the loop and "
                "must run in partition 0: lowering rule R12 (measured)"
            )
    for n in sorted(rules.reduces):
        if parts[n] != {0}:
            out.append(f"{label(n)} must run in partition 0 only: {rule} R13 (tt.reduce)")
    for n in sorted(rules.not_default):
        if 0 in parts[n]:
            out.append(
                f"{label(n)} runs in partition 0, so Triton would insert a default partition "
                f"in front of the plan's and drop its register requests: {rule} D0 (partition "
                "0 holds no MMA and no TMA load)"
            )
    return out


def _tmem_violations(rules: LoweringRules, parts, label, rule: str) -> list[str]:
    """R4, R7 and R10."""
    out = []
    for t in rules.tmem_ifs:
        if parts[t.mma] == parts[t.access]:
            continue
        where = f"{label(t.access)} in scf.if node {t.region} uses the tensor memory of "
        if rules.mma_before_if:
            homes = {frozenset(parts[b]) for b in t.body}
            home = next(iter(homes)) if len(homes) == 1 else frozenset()
            if len(home) != 1 or min(home) <= max(parts[t.mma]):
                out.append(
                    f"{where}{label(t.mma)} from another partition, so the if's body must "
                    f"run in one partition after the MMA's: {rule} R4"
                )
            continue
        body = [b for b in t.body if parts[b] != {0}]
        if parts[t.mma] != {1} or body:
            out.append(
                f"{where}{label(t.mma)} from another partition, so the MMA must run in "
                f"partition 1 and the if's body in partition 0: {rule} R4"
            )
    for owners in rules.tmem_owners:
        where = _partitions_of(parts, owners)
        if len(where) == 1 and where != {0}:
            out.append(
                f"tensor memory of {label(owners[0])} is read in the loop and used only in "
                f"partition {min(where)}: {rule} R7 (one non-default owner)"
            )
    for mma, load in rules.tmem_apart:
        both = parts[mma] & parts[load]
        if both:
            out.append(
                f"{label(load)} reads the tensor memory of {label(mma)} in its partition "
                f"{min(both)}: {rule} R7 (widened: the MMA and the tmem_load run apart)"
            )
    for t in rules.tmem_accesses:
        first = t.accesses[0]
        if any(parts[a] != parts[first] for a in t.accesses):
            out.append(
                f"the tensor memory of {label(first)} is loaded or stored in more than one "
                f"partition: {rule} R10"
            )
        span = _partitions_of(parts, (*t.accesses, *t.mmas))
        if len(span) > 2:
            out.append(
                f"the tensor memory of {label(first)} is used in {len(span)} partitions, "
                f"more than 2: {rule} R10"
            )
    return out


def _partitions_of(parts, nodes) -> set[int]:
    """Every partition that runs one of `nodes`."""
    return set().union(*(parts[n] for n in nodes))

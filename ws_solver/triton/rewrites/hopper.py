"""Hopper (sm_90): release a shared-memory stage only after the wgmma reading it has retired.

Triton 3.6's generic warp-specialization route (``warp_specialize`` then ``pipeline``) makes the
consumer's ``ttng.warp_group_dot`` asynchronous and then arrives on the stage's *empty*
barrier while that wgmma may still be reading the stage: a GEMM waits with ``pendings = 1``
(the wgmma just issued stays in flight) and attention releases the V stage with no wait at
all. The producer then overwrites the stage under the running wgmma.

:func:`fix_async_wgmma_release` rewrites the lowered module (text after ``pipeline`` and
``optimize_partition_warps``, before the common tail) so that the wgmma stays asynchronous and
a stage is released only once a ``warp_group_dot_wait`` has retired every wgmma reading it:

* **deferral** (the usual case): the release of iteration *i*'s stage moves to the first
  point of iteration *i + 1* where a wait retires iteration *i*'s wgmma (predicated off on the
  first iteration, reading the stage index the loop carries), and the last stage is released
  after the loop, after its ``warp_group_dot_wait {pendings = 0}``;
* **sync fallback** wherever the pattern is not recognised with certainty: the wait before the
  release gets ``pendings = 0`` (or such a wait is inserted), which is correct but serialises.

:func:`check_releases` is an independent checker: it pairs each data ring with the barrier
ring its producer waits on, simulates the consumer loop for a few iterations (tracking the
stages read by in-flight wgmmas through ``pendings``) and reports every release of a stage that
an in-flight wgmma still reads, and every stage that is never released.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ... import ir
from ...ir import Block, Module, Op, Value
from .wgmma import ARRIVE, DOT, WAIT, WAIT_BARRIER, is_async_dot, pendings, retires_all

INDEX = "ttg.memdesc_index"
VIEW_OPS = frozenset(
    {
        "ttg.memdesc_trans",
        "ttg.memdesc_subslice",
        "ttg.memdesc_subview",
        "ttg.memdesc_reshape",
        "ttg.memdesc_reinterpret",
    }
)
# Ops that write a shared-memory buffer (the producer's side of a ring).
WRITE_OPS = frozenset(
    {
        "ttng.async_tma_copy_global_to_local",
        "ttng.async_tma_gather",
        "ttg.async_copy_global_to_local",
        "ttg.local_store",
    }
)
SIMULATED_ITERATIONS = 3


class HopperFixError(RuntimeError):
    """The module still has a racy release after every rewrite this module knows."""


@dataclass
class FixReport:
    """What :func:`fix_async_wgmma_release_report` did."""

    deferred: int = 0  # releases moved to the next iteration (+ one after the loop each)
    moved: int = 0  # releases moved later within their iteration
    synchronous: int = 0  # releases made safe by a pendings = 0 wait
    notes: list[str] = field(default_factory=list)


# -- small IR helpers ---------------------------------------------------------------------


def _ring_index(value: Value) -> tuple[Value, Value] | None:
    """(ring, index) when `value` is `memdesc_index %ring[%index]`, through view ops."""
    seen = 0
    while seen < 16:
        op = value.defining_op
        if op is None:
            return None
        if op.name == INDEX and len(op.operands) == 2:
            return op.operands[0], op.operands[1]
        if op.name not in VIEW_OPS or not op.operands:
            return None
        value = op.operands[0]
        seen += 1
    return None


def _ring_depth(ring: Value) -> int | None:
    m = re.search(r"memdesc<(\d+)x", ring.type.text)
    return int(m.group(1)) if m else None


def _is_barrier_ring(ring: Value) -> bool:
    return bool(re.search(r"memdesc<\d+x1xi64\b", ring.type.text))


def _inside(op: Op, loop: Op) -> bool:
    return op is loop or any(a is loop for a in op.ancestors())


def _defined_outside(value: Value, loop: Op) -> bool:
    owner = value.owner
    if isinstance(owner, Op):
        return not _inside(owner, loop)
    region = owner.parent
    holder = region.parent if region is not None else None
    return holder is None or not _inside(holder, loop)


def _top_position(op: Op, body: Block) -> int | None:
    """Position in `body` of `op` or of its ancestor that is a direct child of `body`."""
    cur: Op | None = op
    while cur is not None and cur.parent is not body:
        cur = cur.parent_op
    return body.ops.index(cur) if cur is not None else None


def _loops(module: Module) -> Iterator[Op]:
    for op in module.walk():
        if op.name == "scf.for" and op.regions and op.regions[0].blocks:
            yield op


_LOC = re.compile(r"\s+(loc\(.*\))\s*$")


def _split_loc(text: str) -> tuple[str, str]:
    m = _LOC.search(text)
    return (text[: m.start()], " " + m.group(1)) if m else (text, "")


def _signature(module: Module, op: Op) -> tuple[str, str]:
    """(`: types...` of a one-line op, ` loc(...)` or "")."""
    body, loc = _split_loc(module.op_text(op))
    colon = body.rfind(" : ")
    if colon < 0:
        raise HopperFixError(f"no type signature on '{op.name}' at line {op.line}")
    return body[colon + 1 :], loc


# -- the rewrite ----------------------------------------------------------------------------


@dataclass
class _Release:
    arrive: Op
    position: int  # of the arrive in the loop body
    ring: Value  # the empty-barrier ring
    index: Value  # the stage index both the wgmma's operand and the barrier use
    dot_position: int  # the last async wgmma before the arrive that reads the stage


def _racy_releases(loop: Op) -> list[_Release]:
    """Arrives on a stage's barrier, in `loop`'s body, while a wgmma reading it is in flight."""
    body = loop.body.ops
    reads: list[tuple[int, Value]] = []  # (position of async wgmma, stage index it reads)
    found = []
    for pos, op in enumerate(body):
        if is_async_dot(op):
            for operand in op.operands:
                ri = _ring_index(operand)
                if ri is not None and not _is_barrier_ring(ri[0]):
                    reads.append((pos, ri[1]))
        if op.name != ARRIVE or not op.operands:
            continue
        ri = _ring_index(op.operands[0])
        if ri is None or not _is_barrier_ring(ri[0]):
            continue
        ring, index = ri
        dots = [p for p, idx in reads if idx is index]
        if not dots:
            continue
        dot = dots[-1]
        if _retire_point(body, dot, dot + 1, pos) is None:
            found.append(_Release(op, pos, ring, index, dot))
    return found


def _retire_point(body: list[Op], dot: int, start: int, stop: int, wrap: bool = False):
    """First position p in [start, stop) where the wgmma at `dot` has retired.

    With `wrap`, positions are in the next iteration: the wgmmas after `dot` in this
    iteration count as issued after it.
    """
    issued = sum(1 for op in body[dot + 1 :] if is_async_dot(op)) if wrap else 0
    first = 0 if wrap else dot + 1
    for p in range(first, stop):
        op = body[p]
        if p >= start:
            if retires_all(op):
                return p
            pend = pendings(op) if op.name == WAIT else None
            if pend is not None and pend <= issued:
                return p
        if is_async_dot(op):
            issued += 1
    return None


class _Rewriter:
    def __init__(self, module: Module, synchronous_only: bool) -> None:
        self.m = module
        self.synchronous_only = synchronous_only
        self.report = FixReport()

    def loop(self, loop: Op) -> None:
        releases = _racy_releases(loop)
        if not releases:
            return
        body = loop.body.ops
        deferred: list[tuple[_Release, int, int, Op]] = []
        for rel in releases:
            plan = None if self.synchronous_only else self.deferral(loop, rel)
            if plan is None:
                self.synchronous(loop, rel)
                continue
            kind, where, extra = plan
            if kind == "move":
                self.m.insert_after(body[where], self.m.op_text(rel.arrive))
                self.m.erase(rel.arrive)
                self.report.moved += 1
            else:
                deferred.append((rel, where, extra[0], extra[1]))
        if deferred:
            self.defer(loop, deferred)

    def deferral(self, loop: Op, rel: _Release):
        """('move', position, None) | ('defer', position, (yield index, post-loop wait))."""
        body = loop.body.ops
        later = _retire_point(body, rel.dot_position, rel.position + 1, len(body))
        if later is not None:
            return "move", later, None
        why = self.cannot_defer(loop, rel)
        if why:
            self.report.notes.append(f"line {rel.arrive.line}: synchronous ({why})")
            return None
        where = _retire_point(body, rel.dot_position, 0, len(body), wrap=True)
        if where is None:
            self.report.notes.append(f"line {rel.arrive.line}: synchronous (no retiring wait)")
            return None
        yielded = body[-1]
        j = next(k for k, v in enumerate(yielded.operands) if v is rel.index)
        post = self.post_loop_wait(loop)
        if post is None:
            self.report.notes.append(f"line {rel.arrive.line}: synchronous (no wait after loop)")
            return None
        return "defer", where, (j, post)

    def cannot_defer(self, loop: Op, rel: _Release) -> str:
        body = loop.body.ops
        if len(rel.arrive.operands) != 1:
            return "predicated release"
        if not body or body[-1].name != "scf.yield":
            return "no scf.yield"
        if not any(v is rel.index for v in body[-1].operands):
            return "stage index not carried by the loop"
        if not _defined_outside(rel.ring, loop):
            return "barrier ring defined in the loop"
        depth = _ring_depth(rel.ring)
        if depth is None or depth < 2:
            return "ring of depth < 2 would deadlock"
        if len(loop.operands) < 3 or not loop.body.arguments:
            return "unexpected scf.for form"
        return ""

    def post_loop_wait(self, loop: Op) -> Op | None:
        block = loop.parent
        after = block.ops[block.ops.index(loop) + 1 :]
        for op in after:
            if op.name == WAIT and pendings(op) == 0:
                return op
            if op.name in ("scf.for", "scf.while") or op.name == ARRIVE or is_async_dot(op):
                return None
        return None

    def defer(self, loop: Op, deferred: list[tuple[_Release, int, int, Op]]) -> None:
        m = self.m
        body = loop.body.ops
        iv = loop.body.arguments[0]
        lb, ub = loop.operands[0], loop.operands[1]
        iv_type = iv.type.text
        not_first = m.fresh_name("ws_not_first")
        m.insert_before(body[0], f"{not_first} = arith.cmpi ne, {iv.name}, {lb.name} : {iv_type}")
        by_post: dict[int, tuple[Op, list[str]]] = {}
        for rel, where, j, post in deferred:
            bar_op = rel.arrive.operands[0].defining_op
            index_sig, index_loc = _signature(m, bar_op)
            arrive_sig, arrive_loc = _signature(m, rel.arrive)
            count = self.arrive_count(rel.arrive)
            prev = loop.body.arguments[1 + j]
            bar = m.fresh_name("ws_prev_stage")
            m.insert_after(
                body[where],
                f"{bar} = {INDEX} {rel.ring.name}[{prev.name}] {index_sig}{index_loc}\n"
                f"{ARRIVE} {bar}, {count}, {not_first} {arrive_sig}{arrive_loc}",
            )
            m.erase(rel.arrive)
            last = m.fresh_name("ws_last_stage")
            lines = by_post.setdefault(id(post), (post, []))[1]
            lines.append(
                f"{last} = {INDEX} {rel.ring.name}[{loop.results[j].name}] {index_sig}{index_loc}\n"
                f"{ARRIVE} {last}, {count}, %RAN {arrive_sig}{arrive_loc}"
            )
            self.report.deferred += 1
        for post, lines in by_post.values():
            ran = m.fresh_name("ws_loop_ran")
            text = f"{ran} = arith.cmpi slt, {lb.name}, {ub.name} : {iv_type}\n"
            text += "\n".join(lines).replace("%RAN", ran)
            m.insert_after(post, text)

    def arrive_count(self, arrive: Op) -> str:
        m = re.match(r"ttng\.arrive_barrier\s+%[^\s,]+\s*,\s*(\d+)", self.m.op_text(arrive))
        if not m:
            raise HopperFixError(f"unexpected arrive_barrier at line {arrive.line}")
        return m.group(1)

    def synchronous(self, loop: Op, rel: _Release) -> None:
        """Make the wgmma retire before the release: pendings = 0 on a wait in between."""
        body = loop.body.ops
        waits = [p for p in range(rel.dot_position + 1, rel.position) if body[p].name == WAIT]
        self.report.synchronous += 1
        if waits:
            body[waits[-1]].set_attr("pendings", "0 : i32")
            return
        dot = body[rel.dot_position]
        result = dot.results[0]
        new = self.m.fresh_name("ws_retired")
        self.m.insert_before(
            rel.arrive, f"{new} = {WAIT} {result.name} {{pendings = 0 : i32}} : {result.type.text}"
        )
        for use in list(result.uses):
            pos = _top_position(use.op, loop.body)
            if pos is not None and pos > rel.position:
                self.m.replace_operand(use.op, use.operand_index, new)


def fix_async_wgmma_release_in(
    module: Module, synchronous: bool = False
) -> tuple[Module, FixReport]:
    """:func:`fix_async_wgmma_release` on a parsed module, and what it did: `module` itself
    when its ops show the fix (nothing moved), else the fixed text parsed again (what the check
    reads). `module` is spent either way; `synchronous` forces the fallback."""
    names = {op.name for op in module.walk()}
    if not names & {DOT, WAIT} or ARRIVE not in names:
        return module, FixReport()
    before = module.print()
    problems: list[str] = []
    for synchronous_only in (False, True) if not synchronous else (True,):
        rewriter = _Rewriter(module, synchronous_only)
        for loop in list(_loops(module)):
            rewriter.loop(loop)
        if module.spliced:
            module = ir.parse(module.print())
        problems = check_releases_in(module)
        if not problems:
            return module, rewriter.report
        module = ir.parse(before)
    raise HopperFixError("racy stage release left after the rewrite: " + "; ".join(problems))


def fix_async_wgmma_release_report(text: str, synchronous: bool = False) -> tuple[str, FixReport]:
    """:func:`fix_async_wgmma_release` plus what it did; `synchronous` forces the fallback."""
    if DOT not in text or ARRIVE not in text:
        return text, FixReport()
    module, report = fix_async_wgmma_release_in(ir.parse(text), synchronous)
    return module.print(), report


def fix_async_wgmma_release(text: str) -> str:
    """Rewrite lowered sm_90 TTGIR so no stage is released under an in-flight wgmma."""
    return fix_async_wgmma_release_report(text)[0]


# -- the checker ----------------------------------------------------------------------------


def _warp_specialize_regions(ws: Op) -> list[tuple[Block, list[Value] | None]]:
    """(entry block, outer values of its arguments or None for the default region)."""
    if ws.regions:
        regions = [(r, k > 0) for k, r in enumerate(ws.regions)]
    else:  # the reader shows `default {` / `partitionN(...) {` as sibling ops
        block = ws.parent
        regions = []
        for op in block.ops[block.ops.index(ws) + 1 :]:
            if op.name == "default" or re.fullmatch(r"partition\d+", op.name):
                regions.extend((r, op.name != "default") for r in op.regions)
            else:
                break
    out = []
    for region, isolated in regions:
        if region.blocks:
            out.append((region.blocks[0], list(ws.operands) if isolated else None))
    return out


def _ring_pairs(module: Module) -> tuple[dict[int, int], dict[int, Value]]:
    """(id(data ring) -> id(barrier ring its producer waits on before writing it),
    id(partition argument) -> the `ttg.warp_specialize` operand it stands for)."""
    pairs: dict[int, int] = {}
    outer: dict[int, Value] = {}
    for ws in (op for op in module.walk() if op.name == "ttg.warp_specialize"):
        for entry, operands in _warp_specialize_regions(ws):
            if operands is not None:
                for a in entry.arguments:
                    if a.index < len(operands):
                        outer[id(a)] = operands[a.index]
    for ws in (op for op in module.walk() if op.name == "ttg.warp_specialize"):
        for entry, _ in _warp_specialize_regions(ws):
            waited: dict[int, Value] = {}  # id(stage index) -> barrier ring waited on there
            for op in _walk_block(entry):
                if op.name == WAIT_BARRIER and op.operands:
                    ri = _ring_index(op.operands[0])
                    if ri and _is_barrier_ring(ri[0]):
                        waited[id(ri[1])] = outer.get(id(ri[0]), ri[0])
                if op.name in WRITE_OPS:
                    for operand in op.operands:
                        ri = _ring_index(operand)
                        if ri and not _is_barrier_ring(ri[0]) and id(ri[1]) in waited:
                            data = outer.get(id(ri[0]), ri[0])
                            pairs.setdefault(id(data), id(waited[id(ri[1])]))
    return pairs, outer


def _walk_block(block: Block) -> Iterator[Op]:
    for op in block.ops:
        yield from op.walk()


def check_releases(text: str) -> list[str]:
    """Releases of a stage that an in-flight async wgmma still reads, and stages never released.

    The empty ring of a data ring is the barrier ring its producer waits on (at the same
    stage index) before writing it. Each consumer loop is simulated for a few iterations,
    then the ops after it: an async wgmma adds the stages it reads to the in-flight list, a
    `warp_group_dot_wait {pendings = n}` keeps only the n most recent wgmmas, and an
    arrive on a stage's empty barrier must find no in-flight wgmma reading that stage.
    Stage indices are compared symbolically: a loop-carried index in iteration k is the
    value yielded in iteration k - 1.
    """
    return check_releases_in(ir.parse(text))


def check_releases_in(module: Module) -> list[str]:
    """:func:`check_releases` on a parsed module (its ops as they are: attribute edits count,
    spliced text does not)."""
    pairs, outer = _ring_pairs(module)
    problems = []
    for loop in _loops(module):
        if any(is_async_dot(op) for op in loop.body.ops):
            problems.extend(_simulate(loop, pairs, outer))
    return problems


def _simulate(loop: Op, pairs: dict[int, int], outer: dict[int, Value]) -> list[str]:
    body = loop.body
    yielded = body.ops[-1] if body.ops and body.ops[-1].name == "scf.yield" else None
    iter_args = {id(a): k for k, a in enumerate(body.arguments[1:])}
    inits = loop.operands[3:]
    results = {id(r): k for k, r in enumerate(loop.results)}
    last = SIMULATED_ITERATIONS - 1

    def key(value: Value, it: int | None):
        """Symbolic identity of `value` in iteration `it` (None: after the loop)."""
        for _ in range(SIMULATED_ITERATIONS + 2):
            if it is None and id(value) in results and yielded is not None:
                value, it = yielded.operands[results[id(value)]], last
                continue
            if it is not None and id(value) in iter_args:
                k = iter_args[id(value)]
                if it == 0:
                    return ("outer", id(inits[k]) if k < len(inits) else id(value))
                if yielded is None:
                    return ("unknown", id(value), it)
                value, it = yielded.operands[k], it - 1
                continue
            owner = value.owner
            holder = owner if isinstance(owner, Op) else (owner.parent and owner.parent.parent)
            if it is not None and holder is not None and _inside(holder, loop):
                return ("in", id(value), it)
            return ("outer", id(value))
        return ("unknown", id(value), it)

    problems: list[str] = []
    in_flight: list[list[tuple[int, tuple]]] = []  # per wgmma: (id(empty ring), stage key)
    read: dict[tuple, int] = {}  # (ring, stage) -> iteration it was read in
    released: set[tuple] = set()

    def step(op: Op, it: int | None) -> None:
        nonlocal in_flight
        if is_async_dot(op) or retires_all(op):
            stages = []
            for operand in op.operands:
                ri = _ring_index(operand)
                ring = pairs.get(id(outer.get(id(ri[0]), ri[0]))) if ri else None
                if ring is None:
                    continue
                stage = (ring, key(ri[1], it))
                stages.append(stage)
                read.setdefault(stage, -1 if it is None else it)
            if is_async_dot(op):
                in_flight.append(stages)
            else:
                in_flight = []
        elif op.name == WAIT and pendings(op) is not None:
            n = pendings(op)
            in_flight = in_flight[len(in_flight) - n :] if n else []
        elif op.name == ARRIVE and op.operands:
            ri = _ring_index(op.operands[0])
            if ri is None:
                return
            stage = (id(outer.get(id(ri[0]), ri[0])), key(ri[1], it))
            released.add(stage)
            if any(stage in group for group in in_flight):
                where = "after the loop" if it is None else f"iteration {it}"
                problems.append(
                    f"line {op.line}: arrive_barrier releases a stage that an in-flight wgmma "
                    f"reads ({where} of the loop at line {loop.line})"
                )

    def run(ops: list[Op], it: int | None) -> None:
        for op in ops:
            if op.name in ("scf.for", "scf.while") and op is not loop:
                continue  # another loop: simulated on its own
            if op.regions:
                # nested regions may not run: their waits are ignored, their wgmmas and
                # arrives counted (both conservative)
                for inner in op.walk():
                    if inner is not op and inner.name != WAIT:
                        step(inner, it)
                continue
            step(op, it)

    for it in range(SIMULATED_ITERATIONS):
        run(body.ops, it)
    block = loop.parent
    run(block.ops[block.ops.index(loop) + 1 :], None)
    for stage, it in read.items():
        if stage not in released:
            problems.append(
                f"loop at line {loop.line}: a stage read in iteration {it} is never released"
            )
    return sorted(set(problems))

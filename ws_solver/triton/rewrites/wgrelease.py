"""Hopper (sm_90), PTX: release a consumer's shared-memory stages per warp group.

Triton 3.6 lowers every ``ttng.arrive_barrier`` of a partition to a named barrier over the
whole partition (``bar.sync 0, 256`` for an 8-warp default region) followed by one thread's
``mbarrier.arrive``. In a consumer of two warp groups those barriers, and the conservative
ones its barrier analysis puts before each ``mbarrier.try_wait``, hold both warp groups in
lockstep, so they compute their softmax (or epilogue math) at the same time and leave the
tensor cores idle together. Nothing in TTGIR can ask for anything else.

:func:`release_per_warp_group` rewrites the PTX of such a kernel so that each warp group
releases on its own:

* the "empty" mbarriers the default region arrives on are initialised with count 2;
* at each release, a named barrier over the warp group (128 threads) replaces the
  partition-wide one, and the warp group's first thread arrives;
* in a loop that makes such releases and touches shared memory only through mbarriers,
  wgmmas and TMA loads other partitions issue, the other partition-wide barriers become per
  warp group too: nothing in it is exchanged between the two warp groups through shared
  memory, so nothing needs them to meet. A TMA load the region issues itself is such an
  exchange (one thread refills a stage both warp groups read).

A release it cannot rewrite that way (shared-memory data in its window) keeps its barrier
and arrives with count 2, so the doubled count holds everywhere.

Triton 3.9 prints the same releases and initialises the rings under another predicate (the
elected lane of warp 0, not the region's first thread). Which thread initialises a ring does
not matter to the rewrite: it takes the predicated count-1 init of each released mbarrier,
provided there is exactly one.

The rewrite is all or nothing: any pattern it does not recognise leaves the PTX as it was,
with the reason.
Measured: ``benchmarks/results/2026-11-29-gpu-warp-group-release/results.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...ir import Module, Op
from .ptx import TID, declare_more, free_barrier_pair, loops, register_counts
from .wgmma import ARRIVE

WARP_GROUP_THREADS = 128
_REG = r"%r\d+"
_MASK = re.compile(rf"^\s*and\.b32\s+({_REG}),\s*({_REG}),\s*255;")
_SETP0 = re.compile(rf"^\s*setp\.eq\.(?:b32|s32|u32)\s+(%p\d+),\s*({_REG}),\s*0;")
_AND_PRED = re.compile(r"^\s*and\.pred\s+(%p\d+),\s*(%p\d+),\s*(%p\d+);")
_ARRIVE = re.compile(rf"^\s*@(%p\d+) mbarrier\.arrive\.shared::cta\.b64 _, \[({_REG})\];\s*$")
_ANY_ARRIVE = re.compile(rf"mbarrier\.arrive(?:\.\w+)*(?:\.shared(?:::cta)?)?\.b64 _, \[({_REG})\]")
_INIT = re.compile(rf"^\s*@(%p\d+) mbarrier\.init\.shared::cta\.b64 \[({_REG})\], (\d+);\s*$")
_PARTITION_BAR = re.compile(r"^\s*bar\.sync\s+0,\s*256;\s*$")
_ANY_BAR = re.compile(r"^\s*(?:bar|barrier)\.(?:sync|arrive|red\.\w+)\b")
_GUARD = re.compile(r"^\s*@(%p\d+)\s")
_FALSE = re.compile(r"^\s*mov\.pred\s+(%p\d+),\s*0;")
# An instruction's destinations: `%p1, ...`, `%r1|%p1, ...` (elect.sync), `%p1|%p2, ...`.
_DESTINATIONS = re.compile(r"^\s*(?:@!?%p\d+\s+)?[a-z][\w.]*\s+((?:%\w+\|)*%\w+)\s*,")
# Shared-memory data one warp group could hand the other: generic-proxy accesses, and a TMA
# load the region issues itself (one thread fills a stage both warp groups' wgmmas read, so it
# must wait for both to be done with it: gemm_tma t128x128x128 w8 s2's explore:1 plan, whose
# default region loads A, faulted at launch with the loop's barriers made per warp group).
_SHARED_DATA = re.compile(
    r"\b(?:ld|st|atom|red)\.shared\b|\bldmatrix\b|\bstmatrix\b|cp\.async\.c[ag]"
    r"|cp\.async\.bulk(?:\.tensor\.\w+)?\.shared"
)
_DEF = re.compile(rf"^\s*([a-z][\w.]*)\s+({_REG}),\s*(.+?);")
# Lines that may sit between a release's barrier and its arrive.
_BETWEEN = re.compile(r"^\s*(?://.*|\.loc\b.*|and\.pred\b.*|add\.s32\b.*|mov\.\w+\b.*|)$")


@dataclass
class ReleaseReport:
    """What :func:`release_per_warp_group` did (``reason`` when it did nothing)."""

    mbarriers: int = 0  # released mbarriers whose count went to 2
    per_warp_group: int = 0  # releases now made by each warp group
    counted: int = 0  # releases kept partition-wide, arriving with count 2
    barriers: int = 0  # partition-wide barriers now per warp group
    barrier_ids: tuple[int, ...] = ()  # the named barriers it took (one per warp group)
    reason: str = ""

    def note(self) -> str:
        if self.reason:
            return f"per-warp-group release not applied: {self.reason}"
        return (
            f"per-warp-group release: {self.mbarriers} mbarrier(s) counted twice, "
            f"{self.per_warp_group} release(s) per warp group, {self.counted} with count 2, "
            f"{self.barriers} barrier(s) per warp group"
        )


class _NotApplicable(Exception):
    pass


def _predicate(line: str) -> str | None:
    m = _GUARD.match(line)
    return m.group(1) if m else None


_BARRIER_RING = re.compile(r"memdesc<(\d+)x1xi64\b")


def release_ring_depth(ttgir: Module) -> int | None:
    """The depth of the mbarrier rings a lowered module's ``arrive_barrier``s release (the
    stages), or None unless there are some and they all agree."""
    depths = {_released_ring_depth(op) for op in ttgir.walk() if op.name == ARRIVE}
    return depths.pop() if len(depths) == 1 and None not in depths else None


def _released_ring_depth(arrive: Op) -> int | None:
    """Depth of the ring an arrive's barrier is a ``memdesc_index`` of, None if it is not."""
    index = arrive.operands[0].defining_op if arrive.operands else None
    if index is None or index.name != "ttg.memdesc_index" or not index.operands:
        return None
    found = _BARRIER_RING.match(index.operands[0].type.text.removeprefix("!ttg."))
    return int(found.group(1)) if found else None


def has_two_warp_groups(default_warps: int) -> bool:
    """A default region of this many warps is the shape :func:`release_per_warp_group` handles."""
    return default_warps * 32 == 2 * WARP_GROUP_THREADS


def has_one_warp_group(warps: int) -> bool:
    """This many warps make one warp group at most."""
    return warps * 32 <= WARP_GROUP_THREADS


def release_per_warp_group(
    ptx: str, default_warps: int, ring_slots: int
) -> tuple[str, ReleaseReport]:
    """The PTX with the default region's stage releases made per warp group; unchanged, with
    the reason, where the kernel does not have the shape this handles. ``ring_slots`` is the
    depth of the released mbarrier rings (from the TTGIR: the stages)."""
    if not has_two_warp_groups(default_warps):
        return ptx, ReleaseReport(reason=f"the default region has {default_warps} warps, not 8")
    if ring_slots < 1:
        return ptx, ReleaseReport(reason="the depth of the released mbarrier rings is unknown")
    try:
        return _Rewrite(ptx.split("\n"), ring_slots).run()
    except _NotApplicable as e:
        return ptx, ReleaseReport(reason=str(e))


class _Rewrite:
    def __init__(self, lines: list[str], ring_slots: int) -> None:
        self.lines = lines
        self.ring_slots = ring_slots
        self.defs: dict[str, list[int]] = {}
        for i, line in enumerate(lines):
            m = _DEF.match(line)
            if m:
                self.defs.setdefault(m.group(2), []).append(i)
        self.loops = loops(lines)
        self.report = ReleaseReport()
        # Predicates only ever set false (a peeled iteration's release that never happens):
        # their arrives are dead code.
        writes: dict[str, int] = {}
        for line in lines:
            if m := _DESTINATIONS.match(line):
                for reg in m.group(1).split("|"):
                    writes[reg] = writes.get(reg, 0) + 1
        self.never = {
            m.group(1) for line in lines if (m := _FALSE.match(line)) and writes[m.group(1)] == 1
        }

    # -- analysis ----------------------------------------------------------------------------
    def address(self, reg: str, depth: int = 0) -> tuple[int, bool] | None:
        """(offset from global_smem, has a run-time part), or None if not based on it."""
        defs = self.defs.get(reg, [])
        if len(defs) != 1 or depth > 8:
            return None
        m = _DEF.match(self.lines[defs[0]])
        assert m
        op, args = m.group(1), [a.strip() for a in m.group(3).split(",")]
        if op == "mov.b32" and args == ["global_smem"]:
            return 0, False
        if op != "add.s32" or len(args) != 2:
            return None
        parts = [self.address(a, depth + 1) if a.startswith("%r") else None for a in args]
        based = [p for p in parts if p is not None]
        if len(based) != 1:
            return None
        offset, dynamic = based[0]
        other = args[1] if parts[0] is not None else args[0]
        if re.fullmatch(r"-?\d+", other):
            return offset + int(other), dynamic
        return offset, True

    def thread0(self) -> tuple[str, str]:
        """(the predicate 'first thread of the default region', the %tid.x register)."""
        tids = {m.group(1) for line in self.lines if (m := TID.match(line))}
        masked = {
            m.group(1): m.group(2)
            for line in self.lines
            if (m := _MASK.match(line)) and m.group(2) in tids
        }
        preds = [
            (m.group(1), masked[m.group(2)])
            for line in self.lines
            if (m := _SETP0.match(line)) and m.group(2) in masked
        ]
        if len(preds) != 1:
            raise _NotApplicable(f"{len(preds)} 'first thread of 256' predicates, not 1")
        return preds[0]

    def loop_of(self, index: int) -> tuple[int, int] | None:
        """The innermost loop (label line, back-branch line) around line ``index``."""
        around = [(s, e) for s, e in self.loops if s < index < e]
        return min(around, key=lambda loop: loop[1] - loop[0], default=None)

    def shares_data(self, start: int, end: int) -> bool:
        return any(_SHARED_DATA.search(line) for line in self.lines[start:end])

    def barrier_before(self, index: int) -> int:
        """The partition-wide barrier a release's arrive follows."""
        for k in range(index - 1, max(index - 8, 0), -1):
            if _PARTITION_BAR.match(self.lines[k]):
                return k
            if not _BETWEEN.match(self.lines[k]):
                break
        raise _NotApplicable(f"no partition barrier right before the arrive at line {index + 1}")

    # -- the rewrite ------------------------------------------------------------------------
    def run(self) -> tuple[str, ReleaseReport]:
        lines, report = self.lines, self.report
        t0, tid = self.thread0()
        pred_defs = {
            m.group(1): (i, m.group(2), m.group(3))
            for i, line in enumerate(lines)
            if (m := _AND_PRED.match(line))
        }
        releases = []  # (arrive line, and.pred line to edit or None, ring offset)
        for i, line in enumerate(lines):
            m = _ARRIVE.match(line)
            if not m:
                continue
            pred, reg = m.group(1), m.group(2)
            if pred == t0:
                via = None
            elif pred in pred_defs and t0 in pred_defs[pred][1:]:
                via = pred_defs[pred][0]
            else:
                continue  # another region's arrive
            where = self.address(reg)
            if where is None:
                raise _NotApplicable(f"cannot resolve the address of the arrive at line {i + 1}")
            releases.append((i, via, where))
        if not releases:
            raise _NotApplicable("the default region makes no stage release")
        slots = self.released_slots([w for _, _, w in releases])
        inits = self.ring_inits(slots)
        self.check_other_arrives(slots, {i for i, _, _ in releases})
        first_id = self.free_barrier_pair()
        leader, lane, bar_id = self.new_registers()
        plans = [(i, via, self.barrier_before(i), self.loop_of(i)) for i, via, _ in releases]
        # Every check is done: from here on the PTX only changes.
        for k in inits:
            lines[k] = lines[k].replace("], 1;", "], 2;")
        report.mbarriers = len(slots)
        per_wg_barrier = f"\tbar.sync \t{bar_id}, {WARP_GROUP_THREADS};"
        loops: set[tuple[int, int]] = set()
        for i, via, barrier, loop in plans:
            window = loop or (self.previous_barrier(barrier), self.next_barrier(i))
            if self.shares_data(*window):
                lines[i] = lines[i].replace("];", "], 2;")
                report.counted += 1
                continue
            if via is None:
                lines[i] = lines[i].replace(f"@{t0} ", f"@{leader} ", 1)
            else:
                lines[via] = re.sub(rf"{re.escape(t0)}\b", leader, lines[via])
            report.per_warp_group += 1
            if loop is not None:
                loops.add(loop)
            else:
                lines[barrier] = per_wg_barrier
                report.barriers += 1
        for start, end in loops:
            for k in range(start, end):
                if _PARTITION_BAR.match(lines[k]):
                    lines[k] = per_wg_barrier
                    report.barriers += 1
        self.declare(t0, tid, leader, lane, bar_id, first_id)
        report.barrier_ids = (first_id, first_id + 1)
        return "\n".join(lines), report

    def released_slots(self, addresses: list[tuple[int, bool]]) -> set[int]:
        """Offsets of every mbarrier the releases arrive on: a ring of ``ring_slots`` from
        each address with a run-time part, the slot itself for a constant one (a peeled
        iteration's release: that mbarrier alone is counted twice)."""
        slots: set[int] = set()
        for offset, dynamic in addresses:
            if dynamic:
                slots.update(offset + 8 * k for k in range(self.ring_slots))
        slots.update(offset for offset, dynamic in addresses if not dynamic)
        return slots

    def ring_inits(self, slots: set[int]) -> list[int]:
        """The init line of every released mbarrier: exactly one each, with count 1."""
        found: dict[int, list[tuple[int, int]]] = {}
        for i, line in enumerate(self.lines):
            m = _INIT.match(line)
            where = self.address(m.group(2)) if m else None
            if m and where is not None and not where[1] and where[0] in slots:
                found.setdefault(where[0], []).append((i, int(m.group(3))))
        if set(found) != slots:
            missing = sorted(slots - set(found))
            raise _NotApplicable(f"no init for the released mbarrier(s) at {missing}")
        for offset, inits in sorted(found.items()):
            if len(inits) != 1:
                raise _NotApplicable(
                    f"the released mbarrier at {offset} is initialised {len(inits)} times"
                )
            if inits[0][1] != 1:
                raise _NotApplicable(
                    f"the released mbarrier at {offset} has count {inits[0][1]}, not 1"
                )
        return [inits[0][0] for inits in found.values()]

    def check_other_arrives(self, slots: set[int], rewritten: set[int]) -> None:
        """Every other arrive (a TMA producer's expect-tx, another region's, one with a
        count) must miss the doubled mbarriers."""
        for i, line in enumerate(self.lines):
            m = _ANY_ARRIVE.search(line)
            if not m or i in rewritten or _predicate(line) in self.never:
                continue
            where = self.address(m.group(1))
            if where is None:
                raise _NotApplicable(f"cannot resolve the arrive at line {i + 1}")
            offset, dynamic = where
            reach = {offset + 8 * k for k in range(self.ring_slots)} if dynamic else {offset}
            if reach & slots:
                raise _NotApplicable(f"the arrive at line {i + 1} also lands on a release ring")

    def free_barrier_pair(self) -> int:
        """The first of two consecutive named barrier ids nothing uses (one per warp group)."""
        first = free_barrier_pair(self.lines)
        if first is None:
            raise _NotApplicable("no two free named barriers")
        return first

    def new_registers(self) -> tuple[str, str, str]:
        """Names for the warp group's first-thread predicate, a lane and its barrier id."""
        counts = register_counts(self.lines)
        if counts is None:
            raise _NotApplicable("no .reg declarations to extend")
        return f"%p{counts['p']}", f"%r{counts['r']}", f"%r{counts['r'] + 1}"

    def declare(self, t0: str, tid: str, leader: str, lane: str, bar_id: str, first: int) -> None:
        """Extend the .reg declarations and compute the new registers where ``t0`` is."""
        declare_more(self.lines, predicates=1, b32=2)
        at = next(
            i for i, line in enumerate(self.lines) if (m := _SETP0.match(line)) and m.group(1) == t0
        )
        self.lines[at + 1 : at + 1] = [
            f"\tand.b32 \t{lane}, {tid}, {WARP_GROUP_THREADS - 1};",
            f"\tsetp.eq.b32 \t{leader}, {lane}, 0;",
            f"\tshr.u32 \t{bar_id}, {tid}, 7;",
            f"\tand.b32 \t{bar_id}, {bar_id}, 1;",
            f"\tadd.s32 \t{bar_id}, {bar_id}, {first};",
        ]

    def previous_barrier(self, index: int) -> int:
        for k in range(index - 1, -1, -1):
            if _ANY_BAR.match(self.lines[k]):
                return k
        return 0

    def next_barrier(self, index: int) -> int:
        for k in range(index + 1, len(self.lines)):
            if _ANY_BAR.match(self.lines[k]):
                return k + 1
        return len(self.lines)

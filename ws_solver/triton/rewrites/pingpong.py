"""Hopper (sm_90), PTX: make a two-warp-group consumer take turns at the tensor cores.

After :mod:`wgrelease` the two warp groups of an 8-warp consumer run on their own, and
nothing stops them from issuing their wgmmas at the same time and then doing their softmax
at the same time, with the tensor cores idle. FlashAttention-3 orders them with two named
barriers ("ping-pong"): a warp group issues its GEMMs only after the other has issued its
own, so one warp group's softmax runs under the other's GEMMs.

:func:`take_turns` does that for a loop of the default region whose body issues exactly two
wgmma groups, A then B, with A's results awaited (``wgmma.wait_group 0``) before B is
issued: attention's S = Q·Kᵀ (A) and O += P·V (B). A *turn* is B of one iteration and A of
the next, which the body issues back to back; the softmax sits between a warp group's turns.
Each warp group syncs on its own barrier before a turn and arrives on the other's after it:

* before the loop, warp group 1 arrives on warp group 0's barrier (warp group 0 goes first)
  and each warp group syncs on its own (its first turn: A of the first iteration);
* in the body, each arrives on the other's barrier after A and syncs on its own before B;
* after the loop, each arrives on the other's barrier (its last turn: B of the last
  iteration) and warp group 0 syncs once more, to take back the credit of the first step.

Every barrier phase then has exactly one sync of one warp group and one arrive of the
other (256 threads), in every trip count; the pre-loop lines run only when the loop is
entered (they sit in its fall-through preheader) and the post-loop lines only when it is
left through its latch, so a loop that is skipped runs neither. Between a sync and its
arrive a warp group waits on nothing but the producer's mbarriers, whose stages the other
warp group has already released, so the turns cannot deadlock.

The rewrite is all or nothing per module, like :mod:`wgrelease`: a loop of another shape is
left alone, and any doubt about the one it would change leaves the PTX as it was, with the
reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .ptx import (
    LABEL,
    declare_more,
    free_barrier_pair,
    labels,
    loops,
    register_counts,
    tid_register,
)
from .wgrelease import WARP_GROUP_THREADS

_FENCE = re.compile(r"^\s*wgmma\.fence\.sync\.aligned;")
_COMMIT = re.compile(r"^\s*wgmma\.commit_group\.sync\.aligned;")
_WAIT_ALL = re.compile(r"^\s*wgmma\.wait_group\.sync\.aligned\s+0;")
_LATCH = re.compile(r"^\s*@!?%p\d+\s+bra(?:\.uni)?\s+(\$L__\w+);")
_ANY_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\S+);")
# What wgrelease leaves in a loop it made per warp group: a barrier over 128 threads.
_PER_WG_BAR = re.compile(rf"^\s*bar\.sync\s+%r\d+,\s*{WARP_GROUP_THREADS};")
_ANY_BAR = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bar|barrier)\.(?:sync|arrive|red\.\w+)\b")
_REGISTER_BAR = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bar|barrier)\.\w+(?:\.\w+)*\s+%r\d+")
_UNCONDITIONAL = re.compile(r"^\s*(?:bra(?:\.uni)?\s|ret;|exit;)")


@dataclass
class TurnsReport:
    """What :func:`take_turns` did (``reason`` when it did nothing)."""

    loops: int = 0  # loops whose warp groups now take turns
    reason: str = ""

    def note(self) -> str:
        if self.reason:
            return f"warp-group turns not applied: {self.reason}"
        return f"warp-group turns: {self.loops} loop(s) take turns at the tensor cores"


class _NotApplicable(Exception):
    pass


@dataclass(frozen=True)
class _Loop:
    header: int  # the header label's line
    latch: int  # the back branch's line
    after_a: int  # A's commit line
    before_b: int  # B's fence line


def take_turns(ptx: str, taken: frozenset[int] = frozenset()) -> tuple[str, TurnsReport]:
    """The PTX with each eligible loop's two warp groups taking turns; unchanged, with the
    reason, where there is none or anything is in doubt. Run it on PTX that
    :func:`wgrelease.release_per_warp_group` has rewritten (it looks for that rewrite's
    per-warp-group barriers to find the loops of a two-warp-group default region);
    ``taken``: named barrier ids in use that the PTX names only through registers
    (wgrelease's pair)."""
    lines = ptx.split("\n")
    try:
        at = labels(lines)
        found = [_eligible(lines, loop, at) for loop in _innermost_loops(lines, at)]
        eligible = [loop for loop in found if loop is not None]
        if not eligible:
            raise _NotApplicable("no loop of a two-warp-group consumer issues two wgmma groups")
        return _rewrite(lines, eligible, taken), TurnsReport(loops=len(eligible))
    except _NotApplicable as e:
        return ptx, TurnsReport(reason=str(e))


def _innermost_loops(lines: list[str], at: dict[str, int]) -> list[tuple[int, int]]:
    """(header label line, latch line) of every innermost loop."""
    found = loops(lines, at)
    return [
        (s, e)
        for s, e in found
        if not any(s < s2 and e2 < e for s2, e2 in found if (s2, e2) != (s, e))
    ]


def _eligible(lines: list[str], loop: tuple[int, int], at: dict[str, int]) -> _Loop | None:
    """The loop's turn points, or None when it is not this shape (an error when it is but
    something about it is in doubt)."""
    header, latch = loop
    body = range(header + 1, latch)
    fences = [i for i in body if _FENCE.match(lines[i])]
    commits = [i for i in body if _COMMIT.match(lines[i])]
    if len(fences) != 2 or len(commits) != 2:
        return None
    if not any(_PER_WG_BAR.match(lines[i]) for i in body):
        return None  # not a loop wgrelease made per warp group
    fa, fb = fences
    ca, cb = commits
    where = f"the loop at line {header + 1}"
    if not fa < ca < fb < cb:
        raise _NotApplicable(f"the wgmma groups of {where} interleave")
    if not any(_WAIT_ALL.match(lines[i]) for i in range(ca, fb)):
        raise _NotApplicable(f"{where} does not await A before issuing B")
    for i in body:
        line = lines[i]
        if _ANY_BAR.match(line) and not _PER_WG_BAR.match(line):
            raise _NotApplicable(f"{where} has a barrier over more than a warp group")
        m = _ANY_BRANCH.search(line)
        if m and m.group(1) != "waitLoop" and not (header < at.get(m.group(1), -1) < latch):
            raise _NotApplicable(f"{where} has another exit (line {i + 1})")
    if not _LATCH.match(lines[latch]):
        raise _NotApplicable(f"{where} does not end in a conditional back branch")
    header_name = LABEL.match(lines[header]).group(1)  # type: ignore[union-attr]
    targets = sum(
        1 for line in lines if (m := _ANY_BRANCH.search(line)) and m.group(1) == header_name
    )
    if targets != 1:
        raise _NotApplicable(f"{where} is entered by {targets - 1} branch(es) besides its latch")
    previous = next(
        (
            k
            for k in range(header - 1, -1, -1)
            if lines[k].strip() and not lines[k].lstrip().startswith("//")
        ),
        None,
    )
    if previous is None or _UNCONDITIONAL.match(lines[previous]):
        raise _NotApplicable(f"{where} has no fall-through preheader")
    return _Loop(header, latch, ca, fb)


def _rewrite(lines: list[str], eligible: list[_Loop], taken: frozenset[int]) -> str:
    if any(_REGISTER_BAR.match(line) and not _PER_WG_BAR.match(line) for line in lines):
        # its id could be any: nothing tells which ids are free
        raise _NotApplicable("a named barrier other than wgrelease's takes its id from a register")
    first = free_barrier_pair(lines, taken)
    if first is None:
        raise _NotApplicable("no two free named barriers")
    tid = tid_register(lines)
    if tid is None:
        raise _NotApplicable("%tid.x is not read exactly once")
    counts = register_counts(lines)
    if counts is None:
        raise _NotApplicable("no .reg declarations to extend")
    second, own, other = f"%p{counts['p']}", f"%r{counts['r']}", f"%r{counts['r'] + 1}"
    wg = f"%r{counts['r'] + 2}"
    out = list(lines)
    # Insert from the bottom up so that earlier line numbers stay valid.
    edits: list[tuple[int, list[str]]] = []
    for loop in eligible:
        edits.append(
            (
                loop.latch + 1,
                [
                    f"\tbar.arrive \t{other}, {2 * WARP_GROUP_THREADS};",
                    f"\t@!{second} bar.sync \t{first}, {2 * WARP_GROUP_THREADS};",
                ],
            )
        )
        edits.append((loop.before_b, [f"\tbar.sync \t{own}, {2 * WARP_GROUP_THREADS};"]))
        edits.append((loop.after_a + 1, [f"\tbar.arrive \t{other}, {2 * WARP_GROUP_THREADS};"]))
        edits.append(
            (
                loop.header,
                [
                    f"\tshr.u32 \t{wg}, {tid}, 7;",
                    f"\tand.b32 \t{wg}, {wg}, 1;",
                    f"\tsetp.eq.b32 \t{second}, {wg}, 1;",
                    f"\tadd.s32 \t{own}, {wg}, {first};",
                    f"\tsub.s32 \t{other}, {first + 1}, {wg};",
                    f"\t@{second} bar.arrive \t{first}, {2 * WARP_GROUP_THREADS};",
                    f"\tbar.sync \t{own}, {2 * WARP_GROUP_THREADS};",
                ],
            )
        )
    for at, new in sorted(edits, key=lambda e: e[0], reverse=True):
        out[at:at] = new
    declare_more(out, predicates=1, b32=3)
    return "\n".join(out)

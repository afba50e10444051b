"""The PTX text the drop-in's PTX rewrites read and extend (wgrelease.py, pingpong.py): labels
and loops, named barriers, the ``%tid.x`` read and the register declarations."""

from __future__ import annotations

import re

TID = re.compile(r"^\s*mov\.u32\s+(%r\d+),\s*%tid\.x;")
BAR_ID = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bar|barrier)\.(?:sync|arrive|red\.\w+)\s+(\d+)")
LABEL = re.compile(r"^(\$L__\w+):")
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+);")
REG_DECL = re.compile(r"^(\s*\.reg\s+\.(pred|b32)\s+%(p|r))<(\d+)>;")
NAMED_BARRIERS = 16  # per CTA; id 0 is __syncthreads'


def labels(lines: list[str]) -> dict[str, int]:
    """Each label's line."""
    return {m.group(1): i for i, line in enumerate(lines) if (m := LABEL.match(line))}


def loops(lines: list[str], at: dict[str, int] | None = None) -> list[tuple[int, int]]:
    """(label line, back-branch line) of every loop: a branch to a label above it (`at`:
    the labels' lines, when the caller has them)."""
    at = labels(lines) if at is None else at
    return [
        (at[m.group(1)], j)
        for j, line in enumerate(lines)
        if (m := BRANCH.search(line)) and at.get(m.group(1), j) < j
    ]


def free_barrier_pair(lines: list[str], taken: frozenset[int] = frozenset()) -> int | None:
    """The first of two consecutive named barrier ids that no instruction names as a constant
    and ``taken`` does not hold (ids named through registers), or None."""
    used = {int(m.group(1)) for line in lines if (m := BAR_ID.match(line))} | taken
    for first in range(1, NAMED_BARRIERS - 1):
        if not {first, first + 1} & used:
            return first
    return None


def tid_register(lines: list[str]) -> str | None:
    """The register the kernel reads ``%tid.x`` into, if it does so exactly once."""
    found = {m.group(1) for line in lines if (m := TID.match(line))}
    return found.pop() if len(found) == 1 else None


def register_counts(lines: list[str]) -> dict[str, int] | None:
    """How many ``%p`` and ``%r`` registers the declarations make (the next free numbers),
    or None without both declarations."""
    counts = {m.group(3): int(m.group(4)) for line in lines if (m := REG_DECL.match(line))}
    return counts if set(counts) == {"p", "r"} else None


def declare_more(lines: list[str], predicates: int, b32: int) -> None:
    """Extend the register declarations in place by this many ``%p`` and ``%r``."""
    for i, line in enumerate(lines):
        if m := REG_DECL.match(line):
            extra = predicates if m.group(3) == "p" else b32
            lines[i] = f"{m.group(1)}<{int(m.group(4)) + extra}>;"

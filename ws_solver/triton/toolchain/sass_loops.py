"""Where a kernel's spill instructions sit: inside its loops or outside, read off its SASS.

ptxas's byte counts say how much a kernel spills, not where. Two kernels spilling 72 B and
36 B can run 3.25 ms and 5.35 ms (issue 48: the 36 B one reloads its loop counter from local
memory on every K step, the 72 B one spills only around its epilogue). This reads the SASS
of the bundled ``nvdisasm`` and counts the local-memory instructions (``LDL``, ``STL``: all
of a Triton kernel's local memory is spill space) by where they are:

- a **loop** is a backward ``BRA`` (its target at a lower address) and the code between the
  target and the branch; branches back to one head are one loop;
- a loop is **innermost** when no other loop lies inside it: the K loop of a persistent
  GEMM, not its tile loop around it. ptxas puts an mbarrier wait's retry out of line (after
  the kernel's ``EXIT``, with its own backward branches), so the retry does not hide the K
  loop inside it;
- an instruction is **hot** when it sits in an innermost loop and no forward branch inside
  that loop skips it: it runs on every iteration. A flattened persistent kernel has one loop
  whose tile prologue and epilogue are such skipped regions, run once per tile; they count
  as in a loop, not hot.

Pure text in, counts out: `binary_usage.cubin_loop_spills` runs the disassembler. Reading
SASS text is a heuristic on ptxas's layout, not a control-flow analysis: a hot
region that ptxas placed behind a forward branch is missed, and a branch back from
out-of-line code makes a loop of the code it spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INSTRUCTION = re.compile(
    r"^\s*/\*([0-9a-fA-F]+)\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)\s*(.*)$"
)
_LABEL = re.compile(r"^\s*([.$\w]+):\s*$")
_TARGET = re.compile(r"`\(([.$\w]+)\)")
_SPILL_OPCODES = frozenset({"LDL", "STL"})


@dataclass(frozen=True)
class LoopSpills:
    """A kernel's spill instructions (LDL/STL) by where they sit relative to its loops."""

    loops: int  # loops found (backward branches, one per loop head)
    total: int  # spill instructions anywhere
    in_loops: int  # of those, inside some loop
    hot: int  # of those, on the every-iteration path of an innermost loop

    def to_dict(self) -> dict:
        return {
            "loops": self.loops,
            "total": self.total,
            "in_loops": self.in_loops,
            "hot": self.hot,
        }


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: its address, opcode (no modifiers) and branch target label."""

    address: int
    opcode: str
    target: str | None = None


def parse_sass(text: str) -> list[tuple[list[Instruction], dict[str, int]]]:
    """Each code section of ``nvdisasm`` output: its instructions and its labels' addresses."""
    sections: list[tuple[list[Instruction], dict[str, int]]] = []
    code: list[Instruction] = []
    labels: dict[str, int] = {}
    pending: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith(".section"):
            if code:
                sections.append((code, labels))
            code, labels, pending = [], {}, []
            continue
        m = _INSTRUCTION.match(line)
        if m:
            address = int(m.group(1), 16)
            for name in pending:
                labels[name] = address
            pending = []
            target = _TARGET.search(m.group(4))
            code.append(Instruction(address, m.group(2), target.group(1) if target else None))
            continue
        label = _LABEL.match(line)
        if label:
            pending.append(label.group(1))
    if code:
        sections.append((code, labels))
    return sections


def find_loops(code: list[Instruction], labels: dict[str, int]) -> list[tuple[int, int]]:
    """(head, tail) addresses of each loop: backward branches, merged by head."""
    tails: dict[int, int] = {}
    for ins in code:
        if ins.opcode != "BRA" or ins.target not in labels:
            continue
        head = labels[ins.target]
        if head < ins.address:  # not the lone `BRA self` ptxas pads the end with
            tails[head] = max(tails.get(head, head), ins.address)
    return sorted(tails.items())


def innermost(loops: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The loops with no other loop inside them."""
    return [
        outer
        for outer in loops
        if not any(
            inner != outer and outer[0] <= inner[0] and inner[1] <= outer[1] for inner in loops
        )
    ]


def skipped(
    code: list[Instruction], labels: dict[str, int], loop: tuple[int, int]
) -> list[tuple[int, int]]:
    """Address ranges (exclusive) a forward branch inside `loop` jumps over within it."""
    head, tail = loop
    out = []
    for ins in code:
        if ins.opcode != "BRA" or not head <= ins.address <= tail or ins.target not in labels:
            continue
        to = labels[ins.target]
        if ins.address < to <= tail:
            out.append((ins.address, to))
    return out


def loop_spills(text: str) -> LoopSpills:
    """Count the spill instructions of ``nvdisasm`` output by loop, as the module says."""
    loops = total = in_loops = hot = 0
    for code, labels in parse_sass(text):
        found = find_loops(code, labels)
        hot_loops = [(loop, skipped(code, labels, loop)) for loop in innermost(found)]
        loops += len(found)
        for ins in code:
            if ins.opcode not in _SPILL_OPCODES:
                continue
            total += 1
            a = ins.address
            in_loops += any(head <= a <= tail for head, tail in found)
            hot += any(
                head <= a <= tail and not any(lo < a < hi for lo, hi in skips)
                for (head, tail), skips in hot_loops
            )
    return LoopSpills(loops=loops, total=total, in_loops=in_loops, hot=hot)

"""Hopper (sm_90), PTX: build each wgmma's shared-memory descriptor by one 64-bit add.

A wgmma reads its shared-memory operands through 64-bit descriptors: the operand's address
(in 16-byte units, a ``bfe.u32`` of the byte address) in the low word, constant layout
fields in both words. Triton 3.6 prints the descriptors of a ``warp_group_dot``'s k-steps as
``add.s64 desc_k, zext(base), C_k``, and ptxas keeps each in its own uniform register pair,
so the wgmmas issue back to back. Triton 3.9 prints each as ``add.s32 a_k, base, c_k;
cvt.u64.u32 x_k, a_k; or.b64 desc_k, x_k, K`` instead, and ptxas then builds every
descriptor in one uniform register, in turn, between the wgmmas: the tensor cores wait on
that ("mio" stalls on the HGMMAs; attention d128 ran 14% slower than under 3.6 with the same
plan, the rest of its SASS alike: ``benchmarks/results/2026-12-01-triton39-descriptors``).

:func:`fold_wgmma_descriptors` rewrites the second form into the first. It is an identity
of integers wherever it applies: ``base`` is a ``bfe.u32`` of width ``w`` (below ``2**w``),
``c`` is added without 32-bit wrap-around (``c + 2**w - 1 < 2**32``) or or-ed into bits the
base cannot have, and ``K`` has a zero low word, so the ``or.b64`` is an add. Each register
involved has exactly one definition (LLVM's virtual registers: the one definition dominates
every use), and the 64-bit copy of ``base`` is made right after it. A chain without an
offset (``c = 0``) is folded only beside chains with one on the same base (all then share
the copy, as in 3.6's form). A module with more than one function is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_R32 = r"%r\d+"
_R64 = r"%rd\d+"
_DEF = re.compile(rf"^\s*[a-z][\w.]*\s+({_R32}|{_R64}),")
_OR64 = re.compile(rf"^(\s*)or\.b64\s+({_R64}),\s*({_R64}),\s*(\d+);\s*$")
_ZEXT = re.compile(rf"^\s*cvt\.u64\.u32\s+({_R64}),\s*({_R32});\s*$")
_OFFSET = re.compile(rf"^\s*(add\.s32|or\.b32)\s+({_R32}),\s*({_R32}),\s*(\d+);\s*$")
_BFE = re.compile(rf"^\s*bfe\.u32\s+({_R32}),\s*{_R32},\s*\d+,\s*(\d+);\s*$")
_RD_DECL = re.compile(r"^(\s*\.reg\s+\.b64\s+%rd)<(\d+)>;\s*$")
_LOW_WORD = (1 << 32) - 1


@dataclass
class FoldReport:
    """What :func:`fold_wgmma_descriptors` did (``reason`` when it did nothing)."""

    folded: int = 0  # descriptors now one 64-bit add
    bases: int = 0  # 64-bit copies of a base address added
    reason: str = ""

    def note(self) -> str:
        if self.reason:
            return f"wgmma descriptors not folded: {self.reason}"
        return f"wgmma descriptors: {self.folded} built by 64-bit adds on {self.bases} base(s)"


@dataclass(frozen=True)
class _Fold:
    line: int  # the or.b64
    indent: str
    desc: str  # its result
    base: str  # the bfe.u32 result
    addend: int  # c + K
    offset: bool  # c != 0


def fold_wgmma_descriptors(ptx: str) -> tuple[str, FoldReport]:
    """The PTX with every ``bfe → add/or → cvt → or.b64`` descriptor chain made one 64-bit
    add of a 64-bit copy of the base; unchanged, with the reason, when there is none."""
    lines = ptx.split("\n")
    declarations = [i for i, line in enumerate(lines) if _RD_DECL.match(line)]
    if len(declarations) != 1:
        return ptx, FoldReport(reason=f"{len(declarations)} functions declare %rd registers")
    definitions = _single_definitions(lines)
    found = [f for i in range(len(lines)) if (f := _fold_at(lines, i, definitions)) is not None]
    offset_bases = {f.base for f in found if f.offset}
    folds = [f for f in found if f.base in offset_bases]
    if not folds:
        return ptx, FoldReport(reason="no descriptor built by a 32-bit offset")
    decl = _RD_DECL.match(lines[declarations[0]])
    assert decl is not None
    first_free = int(decl.group(2))
    copies = {
        base: f"%rd{first_free + k}" for k, base in enumerate(dict.fromkeys(f.base for f in folds))
    }
    for fold in folds:
        lines[fold.line] = (
            f"{fold.indent}add.s64 \t{fold.desc}, {copies[fold.base]}, {fold.addend};"
        )
    after = {definitions[base]: f"\tcvt.u64.u32 \t{wide}, {base};" for base, wide in copies.items()}
    lines[declarations[0]] = f"{decl.group(1)}<{first_free + len(copies)}>;"
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in after:
            out.append(after[i])
    return "\n".join(out), FoldReport(folded=len(folds), bases=len(copies))


def _single_definitions(lines: list[str]) -> dict[str, int]:
    """Register -> its definition's line, for registers defined exactly once."""
    seen: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if m := _DEF.match(line):
            seen.setdefault(m.group(1), []).append(i)
    return {reg: at[0] for reg, at in seen.items() if len(at) == 1}


def _fold_at(lines: list[str], i: int, definitions: dict[str, int]) -> _Fold | None:
    """The fold of the ``or.b64`` at line ``i``, or None where the identity is not proven."""
    m = _OR64.match(lines[i])
    if m is None or int(m.group(4)) & _LOW_WORD:
        return None
    indent, desc, wide, high = m.group(1), m.group(2), m.group(3), int(m.group(4))
    zext = _ZEXT.match(lines[definitions[wide]]) if wide in definitions else None
    if zext is None or zext.group(2) not in definitions:
        return None
    source = zext.group(2)
    offset = _OFFSET.match(lines[definitions[source]])
    if offset is None:  # the base itself: one operation already, folded only beside others
        how, base, c = "add.s32", source, 0
    elif offset.group(3) in definitions:
        how, base, c = offset.group(1), offset.group(3), int(offset.group(4))
    else:
        return None
    bfe = _BFE.match(lines[definitions[base]])
    if bfe is None:
        return None
    width = min(int(bfe.group(2)), 32)
    if how == "or.b32" and c & ((1 << width) - 1):
        return None  # the or would overlap the base's bits
    if c + (1 << width) - 1 > _LOW_WORD or c + high >= 1 << 64:
        return None  # the 32-bit add could wrap
    return _Fold(i, indent, desc, base, c + high, c != 0)

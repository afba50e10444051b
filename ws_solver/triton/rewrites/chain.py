"""The rewrites the drop-in runs on Triton's output, behind one protocol.

A rewrite has a `name` and `apply(source) -> RewriteResult`: what it made of the source (`out`),
the notes for the compile report, and what it did (`detail`, the rewrite's own record). Two
kinds of source: a parsed TTGIR module (`Ttgir`), which the rewrites of one chain share and
edit in place, and the PTX text.

On the TTGIR after ``pipeline`` and ``optimize_partition_warps`` (`PostPipeline`, which the
lowering guard's child runs too): the plans' register requests, sm_90 wgmma waits sunk to
their first use (overlap.py), the sm_90 stage-release fix (hopper.py). The text is parsed
once, when a rewrite first needs its ops, and printed once; it is read again only where a
rewrite moved or inserted ops that a later one reasons about. On the PTX, each with its own
small reader (ptx.py): the per-warp-group stage release (wgrelease.py), then the warp
groups' turns at the tensor cores (pingpong.py).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ... import ir
from ...ir import Module
from ...ir.attributes import i32_array
from ...model.target import Target, target_for
from ..toolchain import versions
from .overlap import OverlapReport, sink_wgmma_waits_in
from .pingpong import take_turns
from .wgmma import ARRIVE, WAIT
from .wgrelease import (
    has_one_warp_group,
    has_two_warp_groups,
    release_per_warp_group,
    release_ring_depth,
)

WARP_SPECIALIZE = "ttg.warp_specialize"
_REGION = re.compile(r"^\s*partition(\d+)\(.*\)\s*num_warps\((\d+)\)\s*\{\s*$")

# Per specialized loop, in loop order: ((partition id, registers), ...).
RegisterRequests = tuple[tuple[tuple[int, int], ...], ...]


class Ttgir:
    """The TTGIR module the rewrites of one chain share, parsed when one first asks for its
    ops. Attribute edits show in the ops at once; ops a rewrite moved, inserted or erased
    show only in the printed text, which `module` parses again when asked next."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._module: Module | None = None

    @property
    def module(self) -> Module:
        if self._module is None:
            self._module = ir.parse(self._text)
        elif self._module.spliced:
            self._module = ir.parse(self._module.print())
        return self._module

    @module.setter
    def module(self, module: Module) -> None:
        self._module = module

    def has(self, name: str) -> bool:
        """Whether the module has an op of this name (not parsed for it when the name is
        nowhere in the text)."""
        if self._module is None and name not in self._text:
            return False
        return any(op.name == name for op in self.module.walk())

    def print(self) -> str:
        return self._text if self._module is None else self._module.print()

    def located(self) -> str | None:
        """The printed text with a location on every op (`ir.located_text`), where a rewrite
        parsed the module (parsed again if one spliced text in: its new ops have no location
        yet); None where none did, or where the text no longer parses."""
        if self._module is None:
            return None
        try:
            return ir.located_text(self.module)
        except ir.ParseError:
            return None


S = TypeVar("S")  # what a rewrite reads and makes: a Ttgir (edited in place) or PTX text


@dataclass(frozen=True)
class RewriteResult(Generic[S]):
    out: S
    notes: tuple[str, ...] = ()  # lines for the compile report
    detail: Any = None  # what the rewrite did, in its own terms


class Rewrite(Protocol[S]):
    name: str

    def apply(self, source: S) -> RewriteResult[S]: ...


# -- on the TTGIR -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ApplyRegisters:
    """Each lowered op's ``requestedRegisters`` set to its plan's per-partition registers, as
    legal `setmaxnreg` counts of `target`; `detail`: per op, the registers written or None."""

    requests: RegisterRequests
    target: Target
    name: str = "registers"

    def apply(self, source: Ttgir) -> RewriteResult[Ttgir]:
        applied, notes = apply_register_requests(source.module, self.requests, self.target)
        return RewriteResult(source, tuple(notes), applied)


@dataclass(frozen=True)
class SinkWgmmaWaits:
    """sm_90: each wgmma wait sunk to its first use (overlap.py; with `keep_releases`, never
    past a stage release); `detail`: OverlapReport."""

    keep_releases: bool = False
    unspecialized: bool = True  # also in a kernel Triton did not warp-specialize
    name: str = "overlap"

    def apply(self, source: Ttgir) -> RewriteResult[Ttgir]:
        if not source.has(WAIT):
            return RewriteResult(source, (), OverlapReport())
        if not self.unspecialized and not source.has(WARP_SPECIALIZE):
            return RewriteResult(source, (UNSPECIALIZED_KEPT,), OverlapReport())
        done = sink_wgmma_waits_in(source.module, self.keep_releases)
        notes: tuple[str, ...] = ()
        if done.sunk:
            notes += (
                f"wgmma overlap: {done.sunk} wait(s) sunk past {done.passed_ops} op(s), "
                f"{done.carried_releases} release(s) moved with them",
            )
        if done.held_by_release:
            notes += (
                f"wgmma overlap: {done.held_by_release} wait(s) kept above a stage release "
                "(stages released per warp group)",
            )
        return RewriteResult(source, notes, done)


@dataclass(frozen=True)
class FixWgmmaRelease:
    """sm_90: no stage released under an in-flight wgmma (hopper.py), on a module Triton
    warp-specialized; `detail`: FixReport."""

    fix: Callable[[Module], tuple[Module, Any]]  # hopper.fix_async_wgmma_release_in
    name: str = "hopper"

    def apply(self, source: Ttgir) -> RewriteResult[Ttgir]:
        if not source.has(WARP_SPECIALIZE):
            return RewriteResult(source)
        source.module, done = self.fix(source.module)
        counts = ", ".join(
            f"{name} {getattr(done, name)}"
            for name in ("deferred", "moved", "synchronous")
            if hasattr(done, name)
        )
        note = f"hopper fix applied ({counts})" if counts else "hopper fix applied"
        return RewriteResult(source, (note,), done)


@dataclass(frozen=True)
class Unavailable:
    """A rewrite that was asked for and cannot run: the module as it is, and a note."""

    name: str
    note: str

    def apply(self, source: Ttgir) -> RewriteResult[Ttgir]:
        return RewriteResult(source, (self.note,) if source.has(WARP_SPECIALIZE) else ())


@dataclass(frozen=True)
class Withheld:
    """A rewrite ws_solver withholds on purpose: the module as it is, and a note when it has
    what the rewrite would have changed (a wgmma wait)."""

    name: str
    note: str

    def apply(self, source: Ttgir) -> RewriteResult[Ttgir]:
        return RewriteResult(source, (self.note,) if source.has(WAIT) else ())


def hopper_fix() -> FixWgmmaRelease | None:
    """The sm_90 stage-release fix, None when rewrites.hopper cannot be imported."""
    try:
        module = importlib.import_module(f"{__package__}.hopper")
    except ImportError:
        return None
    return FixWgmmaRelease(module.fix_async_wgmma_release_in)


@dataclass
class PostPipeline:
    """The TTGIR stage after ``pipeline``/``optimize_partition_warps``: it records the lowered
    ``ttg.warp_specialize`` ops, applies `rewrites` in order to the module parsed once, keeps
    their results and the depth of the released mbarrier rings (for the PTX rewrite), and
    prints the module once, with a location on every op where it was parsed (`Ttgir.located`;
    then `located`, and the lowering does not parse the text for that again)."""

    num_warps: int
    rewrites: Sequence[Rewrite[Ttgir]]
    lowered: list[dict] = field(default_factory=list)
    results: dict[str, RewriteResult[Ttgir]] = field(default_factory=dict)
    ring_depth: int | None = None
    located: bool = False  # the last call's text has every op located

    def __call__(self, text: str) -> str:
        source = Ttgir(text)
        self.lowered = (
            lowered_ops(source.module, self.num_warps) if source.has(WARP_SPECIALIZE) else []
        )
        for rewrite in self.rewrites:
            result = rewrite.apply(source)
            self.results[rewrite.name] = result
            source = result.out
        applied = self.registers_applied
        if applied is not None and len(applied) == len(self.lowered):
            for op, want in zip(self.lowered, applied, strict=True):
                op["registers_applied"] = want
        self.ring_depth = release_ring_depth(source.module) if source.has(ARRIVE) else None
        located = source.located()
        self.located = located is not None
        return source.print() if located is None else located

    @property
    def notes(self) -> list[str]:
        return [note for result in self.results.values() for note in result.notes]

    @property
    def registers_applied(self) -> list | None:
        result = self.results.get("registers")
        return None if result is None else result.detail

    @property
    def missing(self) -> list[str]:
        """The rewrites asked for that could not run (and had something to do)."""
        return [
            r.name
            for r in self.rewrites
            if isinstance(r, Unavailable) and r.name in self.results and self.results[r.name].notes
        ]

    def facts(self) -> PostFacts:
        """What the drop-in's report and PTX rewrite read of this stage, as plain data."""
        return PostFacts(
            self.lowered, self.ring_depth, self.notes, self.registers_applied, self.missing
        )


@dataclass(frozen=True)
class PostFacts:
    """A `PostPipeline` run's outcome without its rewrites and modules: what the guard's
    child hands back with the module it lowered."""

    lowered: list[dict]
    ring_depth: int | None
    notes: list[str]
    registers_applied: list | None
    missing: list[str]


# Containments, not root causes (benchmarks/results/2026-12-04-configspace-h200/racy.md,
# 2026-12-06-attention-oos-h200):
# - On the H200 (Triton 3.6) the wait sinking made a 4-warp 2-stage attention kernel with S
#   one block ahead racy (1-5 of 199 launches differed in O by up to 0.035), unspecialized
#   and specialized alike; without it the same kernels were deterministic (0 of 199, twice).
# - On an H100 the same shape at 3 and 4 stages (attention d128 m128n64 w4, S ahead, causal
#   or not: configurations the config-space sweep had not timed) computed wrong O with it
#   (rel err 0.045-0.075; at 3 stages 199 of 199 launches differed) and right O without it
#   (0 of 199). The wait there passes softmax only, no other wgmma; every such kernel sits
#   at ptxas's 255 registers with spills. A one-warp-group kernel holds a whole tile's
#   registers in 128 threads, so none gets the move. The price, on the 25 4-warp attention
#   configs it changes (stock Triton 3.6 compiles none of them): of the 22 timed both ways,
#   18 run within 3%, three d64 m128n64 `ahead` kernels 4-10% slower, and causal d128
#   m128n64 s4 `ahead` 5.1x slower (the shape that is wrong at s3 with the move).
# 8-warp consumers that keep their stage releases (keep_releases) were right and
# deterministic with it at every stage count measured, and keep the move.
OVERLAP_MIN_STAGES = 3
OVERLAP_CONTAINED = (
    "wgmma overlap off: a 2-stage loop whose waits could pass its stage reuse (a race measured "
    "on the H200)"
)
ONE_WARP_GROUP = (
    "wgmma waits left where Triton put them: a one-warp-group (4-warp) kernel; sinking them "
    "made a 4-warp attention kernel compute wrong results on an H100"
)


UNSPECIALIZED_KEPT = (
    "wgmma overlap withheld: a kernel Triton did not warp-specialize keeps stock's waits on "
    "this Triton release (its move ran 0.934x stock under 3.9, 1.099x under 3.6)"
)


def overlap_contained(num_warps: int, num_stages: int | None, keep_releases: bool) -> str | None:
    """Why the wait sinking is withheld (None: it is not): a one-warp-group kernel, or fewer
    than OVERLAP_MIN_STAGES stages and no stage release to hold the waits."""
    if has_one_warp_group(num_warps):
        return ONE_WARP_GROUP
    if num_stages is not None and num_stages < OVERLAP_MIN_STAGES and not keep_releases:
        return OVERLAP_CONTAINED
    return None


def post_pipeline(
    capability: int,
    num_warps: int,
    requests: RegisterRequests,
    apply_registers: bool,
    overlap: bool,
    hopper: FixWgmmaRelease | None,
    releases_per_warp_group: bool = False,
    num_stages: int | None = None,
    sink_unspecialized: bool | None = None,
) -> PostPipeline:
    """The post-pipeline stage the drop-in (and the guard's child) runs: the plans' register
    requests (when `apply_registers` and there are plans), then on sm_90 the wgmma overlap
    (when `overlap`) and the Hopper fix (`hopper`; None: unavailable, noted). A consumer
    whose stages the PTX rewrite will release per warp group (`releases_per_warp_group`, two
    warp groups) keeps its releases where they are (overlap.py says why). Not in a
    one-warp-group kernel, nor below OVERLAP_MIN_STAGES stages otherwise (`overlap_contained`);
    in a kernel Triton did not warp-specialize only where `sink_unspecialized` (None: the
    installed release's `sinks_unspecialized_waits`)."""
    if sink_unspecialized is None:
        sink_unspecialized = versions.installed().sinks_unspecialized_waits
    rewrites: list[Rewrite[Ttgir]] = []
    if requests and apply_registers:
        rewrites.append(ApplyRegisters(requests, target_for(capability)))
    if capability // 10 == 9:
        keep = releases_per_warp_group and has_two_warp_groups(num_warps)
        withheld = overlap_contained(num_warps, num_stages, keep) if overlap else None
        if withheld:
            rewrites.append(Withheld("overlap", withheld))
        elif overlap:
            rewrites.append(SinkWgmmaWaits(keep_releases=keep, unspecialized=sink_unspecialized))
        rewrites.append(hopper or Unavailable("hopper", "hopper fix unavailable"))
    return PostPipeline(num_warps, rewrites)


def lowered_ops(module: Module, default_warps: int) -> list[dict]:
    """Per ``ttg.warp_specialize`` op: warps of the default region and of each partition
    region, and the ``requestedRegisters`` Triton chose (None if absent). ``partitions``
    counts the default region too."""
    ops: list[dict] = []
    for op in module.walk():
        if op.name != WARP_SPECIALIZE:
            continue
        # The reader keeps no `num_warps(N)` of a partition region: it is in the region's
        # header line, inside the op's text.
        headers = map(_REGION.match, module.op_text(op).splitlines()[1:])
        warps = [default_warps, *(int(m.group(2)) for m in headers if m)]
        requested = op.attr("requestedRegisters")
        ops.append(
            {
                "warps": warps,
                "requested_registers": list(requested) if requested else None,
                "partitions": len(warps),
            }
        )
    return ops


def apply_register_requests(
    module: Module, requests: RegisterRequests, target: Target
) -> tuple[list, list[str]]:
    """Set each lowered op's ``requestedRegisters`` to its plan's per-partition registers,
    each the legal ``setmaxnreg`` count of `target` that covers it.

    Requests are matched to ``ttg.warp_specialize`` ops in order (one op per specialized
    loop, in loop order); partition 0 is the default region, partition k is region k-1.
    Returns (per op: registers written or None, notes about what was not applied).
    """
    ops = [op for op in module.walk() if op.name == WARP_SPECIALIZE]
    if len(ops) != len(requests):
        note = f"registers not applied: {len(ops)} warp_specialize ops for {len(requests)} plans"
        return [None] * len(requests), [note]
    applied: list = []
    notes: list[str] = []
    for index, (op, parts) in enumerate(zip(ops, requests, strict=True)):
        parts = sorted(parts)
        current = op.attr("requestedRegisters")
        want = [target.setmaxnreg_for(regs) for _, regs in parts[1:]]
        if [p for p, _ in parts] != list(range(len(parts))):
            why = "partition ids are not 0..P-1"
        elif current is None:
            why = "Triton set no requestedRegisters"
        elif len(current) != len(want):
            why = f"Triton lowered {len(current) + 1} partitions, the plan has {len(parts)}"
        else:
            op.set_attr("requestedRegisters", i32_array(want))
            applied.append(want)
            continue
        applied.append(None)
        notes.append(f"registers not applied to warp_specialize op {index}: {why}")
    return applied, notes


# -- on the PTX -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReleasePerWarpGroup:
    """sm_90, an 8-warp default region: each warp group releases its stages on its own
    (wgrelease.py); `detail`: ReleaseReport."""

    default_warps: int
    ring_slots: int  # PostPipeline.ring_depth
    name: str = "wgrelease"

    def apply(self, source: str) -> RewriteResult[str]:
        out, done = release_per_warp_group(source, self.default_warps, self.ring_slots)
        return RewriteResult(out, (done.note(),), done)


@dataclass(frozen=True)
class TakeTurns:
    """sm_90, after ReleasePerWarpGroup: a two-warp-group consumer's warp groups take turns
    issuing their wgmmas (pingpong.py); `detail`: TurnsReport."""

    taken: frozenset[int]  # the named barriers ReleasePerWarpGroup took
    name: str = "turns"

    def apply(self, source: str) -> RewriteResult[str]:
        out, done = take_turns(source, self.taken)
        return RewriteResult(out, (done.note(),), done)


@dataclass(frozen=True)
class FinalPtx:
    """The PTX the drop-in assembles: Triton's, with the per-warp-group release (and the turns)
    where they changed it; `unreleased`: Triton's own then (what ptxas gets if it rejects the
    rewrite), else None."""

    ptx: str
    unreleased: str | None
    notes: tuple[str, ...]


def final_ptx(ptx: str, default_warps: int, ring_depth: int | None, turns: bool) -> FinalPtx:
    """Triton's PTX of a lowered sm_90 module, as the drop-in's compile and the decision
    check's build both assemble it (one definition: the check's cubin is the compile's)."""
    released = ReleasePerWarpGroup(default_warps, ring_depth or 0).apply(ptx)
    notes = list(released.notes)
    if released.out == ptx:
        return FinalPtx(ptx, None, tuple(notes))
    out = released.out
    if turns:
        taken = TakeTurns(frozenset(released.detail.barrier_ids)).apply(out)
        notes.extend(taken.notes)
        out = taken.out
    return FinalPtx(out, ptx, tuple(notes))

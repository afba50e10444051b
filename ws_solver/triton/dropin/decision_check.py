"""The drop-in's specialize decision, checked by the compiler before it is kept.

The model decides whether to specialize a kernel's loops; two facts it cannot see are
checked here, each by building the kernel in the lowering guard's child process (as far as
ptxas, `guard_server.probe_binary` and `probe_stock`):

1. **Stock Triton's decision.** What Triton would build for the same kernel without
   ws_solver: specialized or not, or a failure. On a target whose rates were never checked
   on silicon (`Target.measured`), ws_solver's decision does not reverse stock's without
   evidence (`model.decision.reversal`): stock fails or spills, or the modeled gain is above
   that target's margin. Otherwise the kernel takes stock's decision, with ws_solver's plan
   inside it. On a measured target stock's kernel weighs only where ours fails or spills:
   elsewhere the record says `not built` (issue 49). Where cores allow, its build runs beside
   ours all the same and is cancelled when no rule asks for it, and so does the other
   decision's once stock's says a rule may; the record is the same either way
   (`builds.py`: it depends on which rules asked, never on which build ended first).
2. **Spills.** When ptxas spills the chosen kernel, the other decision is built too, and
   kept when it spills at most half as much (`relieves`; none at all, the case the
   check was made for: a 4-warp 128x256 GEMM spilling 1,696 B ran 7x slower than stock's
   kernel without a spill): the model's register estimate is a model, ptxas's count is the
   fact. Where the spills sit can veto a relief (`BinaryUsage.relieved_by`): a build with
   more spill instructions on an inner loop's every-iteration path (read off the SASS)
   relieves nothing, however few its bytes; among reliefs those instructions order first
   (`worse_than`). Those counts order only two builds that both spill, so they are read
   (nvdisasm, ~0.4 s a cubin) only there, once the bytes leave them a say (`_usages`,
   `Built.read_hot_spills`); the record's builds and evidence show the counts the rules
   read, the same in every cache state. Under
   Triton 3.9, persistent pointer GEMM t128x128x128 gelu flat w4 s2, Triton's partitioner's
   build spilled 36 B against stock's 72 B and was kept, and ran 0.61x stock's speed on the
   H100: it reloads its loop counter from local memory every K step (7 hot spill
   instructions, 5 of them on the K step's path), stock spills only around its epilogue
   (0). A small difference between two spilling kernels decides nothing: over the sm_90
   config space a swap to 2-29% fewer bytes was made in 10 Triton 3.6 configurations, none
   ran faster for it, and 4-warp d64 m128n128 `ahead` ran 1.5x slower
   (benchmarks/results/2026-12-06-attention-oos-h200). Half is a policy between those two
   measured ends, not a fit. ptxas's note that it serialized the wgmmas is recorded but
   decides nothing by itself (on the H200 it comes with fast kernels too).

The other decision of an unspecialized kernel is the heuristic's plan forced to specialize,
else Triton's own partitioner; of a specialized one, the kernel without specialization. A
specialized plan of ours that spills where stock's specialized kernel does not gives way to
Triton's own partitioner first, before the decision itself is given up.

3. **Stock's own kernel is a candidate.** It is the default answer, left only on evidence:
   where ours cannot be built (the guard's child fails, crashes or hangs on it, or it could
   not launch) and stock's can, stock's binary is kept; where the kernel kept at the end
   spills and stock's build spills at most half its bytes (the same relief as in 2), stock's
   binary is kept too. Stock splits a 4-warp 128x256 sm_90 tile between two consumer warp
   groups, a kernel none of ws_solver's plans can express: it ran 1,088 TFLOP/s where the
   unspecialized kernel ws_solver kept spilled 1,696 B and ran 137 (issue 48's H100 sweep).
   A stock kernel that computes with another tile's rows is no candidate: its build fails
   (`toolchain.stock_defects`, read off its TTGIR; ptxas cannot see it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ...model.decision import reversal
from ...model.target import Target
from ..toolchain.binary_usage import BinaryUsage
from ..toolchain.sass_loops import LoopSpills


@dataclass
class Candidate:
    """One way to build the kernel: the partitioner input, annotated (or not)."""

    label: str  # "optimal", "heuristic", "unspecialized", "heuristic, forced", "triton", "stock"
    annotated: str  # the partitioner input annotated ("" for stock's kernel, built from TTIR)
    loop_reports: list = field(default_factory=list)  # pipeline.LoopReport per WS loop
    specialized: bool = False  # as planned; Triton's partitioner decides for "triton"
    triton_decides: bool = False
    stock: bool = False  # stock Triton's own kernel: its make_ttgir on the kernel's TTIR

    @property
    def strategy(self) -> str:
        """The strategy whose plan this is, as the report's strategy_used names it."""
        return {"unspecialized": "none", "heuristic, forced": "heuristic"}.get(
            self.label, self.label
        )


STOCK_LABEL = "stock"


def stock_candidate(built: Built) -> Candidate:
    """Stock Triton's own kernel, as the decision check built it."""
    return Candidate(STOCK_LABEL, "", [], bool(built.specialized), stock=True)


@dataclass
class Built:
    """What the guard's child built of a candidate (or of stock Triton's compile)."""

    status: str  # the probe's verdict: "ok", "error", "hang", "crash", "unavailable"
    specialized: bool | None = None
    usage: BinaryUsage | None = None
    reason: str = ""
    # Reads where a spilling build's spill instructions sit (builds.py), called only where two
    # spilling builds are compared (`read_hot_spills`); None: nothing to read.
    sass: Callable[[], LoopSpills | None] | None = field(default=None, compare=False, repr=False)

    def read_hot_spills(self) -> None:
        """Where this build's spill instructions sit, read once (its usage then says)."""
        read, self.sass = self.sass, None
        if read is None or not self.spills or self.usage is None:
            return
        if self.usage.loop_spills is None:
            spills = read()
            if spills is not None:
                self.usage = replace(self.usage, loop_spills=spills)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.usage is not None

    @property
    def spills(self) -> bool:
        return self.ok and self.usage is not None and self.usage.spills

    @staticmethod
    def from_verdict(verdict: Any) -> Built:
        facts = getattr(verdict, "facts", None) or {}
        usage = facts.get("usage")
        return Built(
            status=verdict.status,
            specialized=facts.get("specialized"),
            usage=BinaryUsage.from_dict(usage) if isinstance(usage, dict) else None,
            reason=verdict.reason,
        )

    def to_dict(self) -> dict:
        out: dict = {"status": self.status}
        if self.specialized is not None:
            out["specialized"] = self.specialized
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
            out["summary"] = self.usage.summary()
        if self.reason:
            out["reason"] = self.reason
        return out


def modeled_ii(candidate: Candidate) -> int | None:
    """The candidate's modeled II summed over its loops (None when it has no model plan)."""
    reports = candidate.loop_reports
    return sum(r.ii for r in reports) if reports else None


def modeled_gain(ours: Candidate, other: Candidate) -> float | None:
    """(II of the other decision - II of ours) / II of ours, when both were modeled."""
    mine, theirs = modeled_ii(ours), modeled_ii(other)
    if not mine or theirs is None:
        return None
    return (theirs - mine) / mine


def _usages(
    chosen: Built, other: Built, where: bool = True
) -> tuple[BinaryUsage, BinaryUsage] | None:
    """Both builds' ptxas usage, or None when either has none; where both spill (and
    ``where``), with where their spill instructions sit: only then do the hot counts order
    them (`BinaryUsage.worse_than`, `relieved_by`: a build without a spill has none)."""
    if not (chosen.ok and other.ok):
        return None
    if where and chosen.spills and other.spills:
        _read_hot_spills(chosen, other)
    assert chosen.usage is not None and other.usage is not None
    return chosen.usage, other.usage


def _read_hot_spills(a: Built, b: Built) -> None:
    """Both builds' hot counts read, side by side where both are still to read."""
    if a.sass is None or b.sass is None:
        a.read_hot_spills()
        b.read_hot_spills()
        return
    reader = threading.Thread(target=a.read_hot_spills, name="ws_solver-sass", daemon=True)
    reader.start()
    try:
        b.read_hot_spills()
    finally:
        reader.join()


def better(chosen: Built, other: Built) -> bool:
    """Whether `other` is strictly less spilled than `chosen` (`BinaryUsage.worse_than`:
    hot spill instructions, then bytes; ties keep the chosen one)."""
    usages = _usages(chosen, other)
    return usages is not None and usages[0].worse_than(usages[1])


def relieves(chosen: Built, other: Built) -> bool:
    """Whether `other` spills at most half what the spilling `chosen` does
    (`BinaryUsage.relieved_by`: half the bytes, and no more hot spill instructions; the
    bytes first, the hot counts read only where they can veto)."""
    usages = _usages(chosen, other, where=False)
    if usages is None or not usages[0].relieved_by(usages[1]):
        return False
    usages = _usages(chosen, other)
    assert usages is not None
    return usages[0].relieved_by(usages[1])


@dataclass
class Settled:
    """The candidate kept and the report's record of how."""

    candidate: Candidate
    record: dict


def settle(
    ours: Candidate,
    target: Target,
    flip: Callable[[Candidate], Candidate],
    build: Callable[[Candidate], Built],
    stock: Callable[[], Built],
    triton: Callable[[], Candidate] | None = None,
) -> Settled:
    """Keep `ours` or the other decision (`flip(ours)`), as the module docstring says;
    `triton`: Triton's own partitioner's candidate, tried when a specialized plan of ours
    spills and stock's specialized kernel spills less. The record's builds say where their
    spill instructions sit where a comparison read it, whatever was cached."""
    builds: dict[str, tuple[str | None, Built]] = {}
    settled = _settle(ours, target, flip, build, stock, triton, builds)
    for name, (plan, built) in builds.items():  # as they are now that the rules read them
        settled.record[name] = {**({"plan": plan} if plan else {}), **built.to_dict()}
    return settled


def _settle(
    ours: Candidate,
    target: Target,
    flip: Callable[[Candidate], Candidate],
    build: Callable[[Candidate], Built],
    stock: Callable[[], Built],
    triton: Callable[[], Candidate] | None,
    builds: dict[str, tuple[str | None, Built]],
) -> Settled:
    ours_built = build(ours)
    builds["ours"] = (ours.label, ours_built)
    record: dict = {"ours": {"plan": ours.label, **ours_built.to_dict()}}
    built_stock: list[Built] = []

    def the_stock() -> Built:
        """Stock's build, asked for only where a rule weighs it (a ptxas run saved else)."""
        if not built_stock:
            built_stock.append(stock())
            builds["stock"] = (None, built_stock[0])
            record["stock"] = built_stock[0].to_dict()
        return built_stock[0]

    if not ours_built.ok:
        why = ours_built.reason or "no binary built"
        stock_built = the_stock()
        if ours_built.status in FAILED and stock_built.ok:
            evidence = f"{ours.label} not built ({why}); stock's kernel {_built(stock_built)}"
            return _stock(record, stock_built, "stock: ours not built", evidence)
        # The guard cannot say (unavailable), or neither builds: nothing to weigh.
        record |= {"rule": "not checked", "evidence": why}
        return Settled(ours, record)
    other: Candidate | None = None
    other_built: Built | None = None

    def the_other() -> tuple[Candidate, Built]:
        nonlocal other, other_built
        if other is None:
            other = flip(ours)
            other_built = build(other)
            builds["other"] = (other.label, other_built)
            record["other"] = {"plan": other.label, **other_built.to_dict()}
        assert other_built is not None
        return other, other_built

    ours_specialized = bool(ours_built.specialized)
    known: bool | None = None
    if target.measured:  # the model's decision stands; stock weighs only if ours spills
        decision = reversal(True, ours_specialized, None)
    else:
        stock_built = the_stock()
        stock_failure = "" if stock_built.status in ("ok", "unavailable") else stock_built.reason
        known = stock_built.specialized if stock_built.ok else None
        gain = None
        if known is not None and known != ours_specialized:
            gain = modeled_gain(ours, the_other()[0])
        decision = reversal(
            False,
            ours_specialized,
            known,
            stock_failure=stock_failure or "",
            stock_spills_more=stock_built.ok and better(stock_built, ours_built),
            modeled_gain=gain,
        )
    chosen, chosen_built = ours, ours_built
    if not decision.keep_ours:
        alt, alt_built = the_other()
        if alt_built.ok and alt_built.specialized == known:
            chosen, chosen_built = alt, alt_built
        else:
            decision = _kept_anyway(decision, alt, alt_built)
    record |= decision.to_dict()
    if (
        chosen_built.spills
        and triton is not None
        and _stock_does_better(chosen, chosen_built, the_stock())
    ):
        # Stock's own partition of the same decision does not spill: try Triton's partitioner
        # before giving up the decision (sm_100 persistent GEMMs: the forced heuristic plan
        # spilled where stock's specialized kernel did not).
        theirs = triton()
        theirs_built = build(theirs)
        builds["triton"] = (theirs.label, theirs_built)
        record["triton"] = {"plan": theirs.label, **theirs_built.to_dict()}
        if theirs_built.specialized == chosen_built.specialized and better(
            chosen_built, theirs_built
        ):
            chosen, chosen_built = theirs, theirs_built
    if chosen_built.spills:
        stock_built = the_stock()

        def evidence() -> str:  # written once the rules read what they weigh
            said = f"ptxas: {chosen.label} {_built(chosen_built)}"
            return said + (f"; {ours.label} {_built(ours_built)}" if chosen is not ours else "")

        if stock_built.ok and stock_built.usage is not None and not stock_built.spills:
            # Nothing spills less than nothing: stock's kernel is kept without building the
            # other decision (issue 49: these were the slowest compiles, three builds in turn).
            said = f"{evidence()}; stock {_built(stock_built)}"
            return _stock(record, stock_built, "spill check: stock", said)
        alt, alt_built = (ours, ours_built) if chosen is not ours else the_other()
        to_stock = relieves(chosen_built, stock_built) and not _spills_less(alt_built, stock_built)
        to_alt = not to_stock and relieves(chosen_built, alt_built)
        said = evidence() + (f"; {alt.label} {_built(alt_built)}" if chosen is ours else "")
        if to_stock:
            # Stock's kernel first: it is the default answer, and the relief rule holds for it.
            said += f"; stock {_built(stock_built)}"
            return _stock(record, stock_built, "spill check: stock", said)
        if to_alt:
            record |= {"rule": "spill check", "evidence": said}
            chosen = alt
        else:  # weighed and kept: the record says against what
            record["spill_check"] = f"{said}; stock {_built(stock_built)}: kept"
    record.setdefault("stock", dict(NOT_BUILT))
    record["kept"] = chosen.label
    record["specialized"] = chosen.specialized
    return Settled(chosen, record)


FAILED = ("error", "crash", "hang")  # the guard's verdicts on a build that did not come out
# The record of a stock build no rule needed: ours built without a spill on a target whose
# rates were measured, where stock's decision does not weigh (issue 49: one ptxas run less).
NOT_BUILT = {"status": "not built", "reason": "not needed: ours built without a spill"}


def _built(built: Built) -> str:
    """What a build came to, for the record's evidence."""
    return built.usage.summary() if built.ok and built.usage else (built.reason or built.status)


def _spills_less(a: Built, b: Built) -> bool:
    """Whether build `a` spills strictly less than build `b` (both built; `worse_than`)."""
    usages = _usages(a, b)
    return usages is not None and usages[1].worse_than(usages[0])


def _stock(record: dict, stock_built: Built, rule: str, evidence: str) -> Settled:
    """Stock Triton's own kernel kept, and why."""
    kept = stock_candidate(stock_built)
    record |= {"rule": rule, "evidence": evidence, "kept": kept.label}
    record["specialized"] = kept.specialized
    return Settled(kept, record)


def _stock_does_better(chosen: Candidate, built: Built, stock_built: Built) -> bool:
    """Stock built the same decision as `chosen` (specialized, by a plan not Triton's) and
    spilled less."""
    return (
        chosen.specialized
        and not chosen.triton_decides
        and stock_built.ok
        and stock_built.specialized is True
        and better(built, stock_built)
    )


def _kept_anyway(decision: Any, alt: Candidate, alt_built: Built) -> Any:
    """Stock's decision was to be taken but its build under ws_solver failed or came out
    otherwise: ours stands, and the record says why."""
    from ...model.decision import Reversal

    why = alt_built.reason or (
        "it came out specialized" if alt_built.specialized else "it came out unspecialized"
    )
    return Reversal(
        True,
        "stock's decision unbuildable",
        f"{decision.evidence}; but {alt.label} could not be built as stock decides ({why})",
    )

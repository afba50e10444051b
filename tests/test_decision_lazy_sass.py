"""Where spill instructions sit (nvdisasm's SASS) is read only where two spilling builds are
compared (decision_check._usages): over every combination of made-up builds, the decision
with the counts read on demand is the one with every count read up front, and only spilling
pairs are read. No Triton needed."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from ws_solver.model.target import SM90, SM100
from ws_solver.triton.dropin.decision_check import Built, Candidate, settle
from ws_solver.triton.toolchain.binary_usage import BinaryUsage
from ws_solver.triton.toolchain.sass_loops import LoopSpills


@dataclass
class FakeLoop:
    ii: int


def _spilling(nbytes: int, hot: int | None) -> BinaryUsage:
    spills = None if hot is None else LoopSpills(loops=2, total=9, in_loops=hot + 1, hot=hot)
    return BinaryUsage(255, nbytes, nbytes, nbytes, False, spills)


# None: the build failed; a hot count of None: the SASS could not be read.
USAGES = (
    BinaryUsage(168, 0, 0, 0, False),
    _spilling(72, 0),
    _spilling(36, 7),
    _spilling(624, 3),
    _spilling(300, 3),
    _spilling(1664, 0),
    _spilling(100, None),
    None,
)


def _built(usage: BinaryUsage | None, specialized: bool, lazy: bool, reads: list) -> Built:
    if usage is None:
        return Built("error", reason="boom")
    if not lazy:
        return Built("ok", specialized, usage)
    spills, token = usage.loop_spills, object()  # one per build

    def read() -> LoopSpills | None:
        reads.append((token, usage))
        return spills

    return Built("ok", specialized, replace(usage, loop_spills=None), sass=read)


def _settle(case: tuple, lazy: bool, reads: list):
    target, specialized, ours_u, other_u, stock_u, triton_u, stock_specialized = case
    ii = [FakeLoop(100)]
    ours = Candidate("optimal", "<ours>", ii, specialized)
    other = Candidate(
        "unspecialized" if specialized else "heuristic, forced", "<o>", ii, not specialized
    )
    triton = Candidate("triton", "<t>", [], True, triton_decides=True)
    builds = {
        "<ours>": _built(ours_u, specialized, lazy, reads),
        "<o>": _built(other_u, not specialized, lazy, reads),
        "<t>": _built(triton_u, True, lazy, reads),
    }
    stock = _built(stock_u, stock_specialized, lazy, reads)
    return settle(
        ours,
        target,
        lambda c: other,
        lambda c: builds[c.annotated],
        lambda: stock,
        lambda: triton,
    )


def test_the_lazy_decision_is_the_eager_one() -> None:
    cases = itertools.product(
        (SM90, SM100), (False, True), USAGES, USAGES, USAGES, USAGES[:4], (False, True)
    )
    read_somewhere = skipped_somewhere = 0
    for case in cases:
        eager = _settle(case, lazy=False, reads=[])
        reads: list = []
        lazy = _settle(case, lazy=True, reads=reads)
        said = (lazy.candidate.label, lazy.record.get("rule"), lazy.record.get("kept"))
        assert said == (
            eager.candidate.label,
            eager.record.get("rule"),
            eager.record.get("kept"),
        ), case
        assert lazy.record.get("specialized") == eager.record.get("specialized"), case
        assert all(u.spills for _, u in reads), case  # spilling builds only
        assert len(reads) == len({id(t) for t, _ in reads}), case  # each read once
        # The record is the same, whatever ran first: a second run says the same.
        assert _settle(case, lazy=True, reads=[]).record == lazy.record, case
        spilling = sum(u is not None and u.spills for u in case[2:6])
        read_somewhere += bool(reads)
        skipped_somewhere += bool(spilling >= 1 and not reads)
    assert read_somewhere and skipped_somewhere  # both happen over the cases


def test_a_spilling_build_against_one_without_a_spill_reads_nothing() -> None:
    """The issue-49 tail: ours spills, stock's does not: stock's kernel is kept and nvdisasm
    never runs (it took 0.4 s of the 1.35 s build of ours)."""
    reads: list = []
    case = (SM90, False, _spilling(1664, 0), USAGES[0], USAGES[0], USAGES[0], True)
    settled = _settle(case, lazy=True, reads=reads)
    assert settled.record["rule"] == "spill check: stock" and reads == []
    assert "spill instructions in hot loops" not in settled.record["evidence"]


def test_the_record_shows_the_counts_the_rules_read() -> None:
    """Two spilling builds compared: both counts are read, and the record's builds and its
    evidence say them."""
    reads: list = []
    case = (SM90, False, _spilling(72, 0), _spilling(36, 7), _spilling(72, 0), USAGES[0], False)
    settled = _settle(case, lazy=True, reads=reads)
    assert len(reads) >= 2
    assert settled.record["ours"]["usage"]["loop_spills"]["hot"] == 0
    assert settled.record["other"]["usage"]["loop_spills"]["hot"] == 7
    assert "7 spill instructions in hot loops" in settled.record["spill_check"]

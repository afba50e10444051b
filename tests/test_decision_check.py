"""The drop-in's decision check on made-up builds: stock's decision on a target never
measured, ptxas's spills, and what the report records (no Triton needed)."""

from dataclasses import dataclass

import pytest

from ws_solver.model.decision import UNMEASURED_REVERSAL_MARGIN, reversal
from ws_solver.model.target import SM90, SM100
from ws_solver.triton.dropin.decision_check import Built, Candidate, settle
from ws_solver.triton.toolchain.binary_usage import BinaryUsage

CLEAN = BinaryUsage(168, 0, 0, 0, False)
SPILLING = BinaryUsage(255, 624, 1664, 1152, True)


@dataclass
class FakeLoop:
    ii: int


def candidate(label: str, specialized: bool, ii: int | None = 100) -> Candidate:
    loops = [FakeLoop(ii)] if ii is not None else []
    return Candidate(label, f"<{label}>", loops, specialized)


def run(ours: Candidate, other: Candidate, target, builds: dict, stock: Built):
    flipped = []

    def flip(c: Candidate) -> Candidate:
        flipped.append(c.label)
        return other

    settled = settle(ours, target, flip, lambda c: builds[c.label], lambda: stock)
    return settled, flipped


def ok(specialized: bool, usage: BinaryUsage = CLEAN) -> Built:
    return Built("ok", specialized, usage)


def test_sm100_tie_takes_stocks_decision():
    ours, other = candidate("optimal", False, 100), candidate("heuristic, forced", True, 100)
    builds = {"optimal": ok(False), "heuristic, forced": ok(True)}
    settled, _ = run(ours, other, SM100, builds, stock=ok(True))
    assert settled.candidate is other
    assert settled.record["rule"] == "unmeasured target: stock's decision"
    assert settled.record["kept"] == "heuristic, forced"
    assert "0.0%" in settled.record["evidence"]


def test_sm100_large_modeled_gain_keeps_ours():
    ours, other = candidate("optimal", False, 100), candidate("heuristic, forced", True, 140)
    builds = {"optimal": ok(False), "heuristic, forced": ok(True)}
    settled, _ = run(ours, other, SM100, builds, stock=ok(True))
    assert settled.candidate is ours and settled.record["rule"] == "modeled gain"


def test_sm100_stock_failure_keeps_ours_and_never_flips():
    ours = candidate("optimal", False)
    stock = Built("error", reason="RuntimeError: PassManager::run failed")
    settled, flipped = run(ours, candidate("x", True), SM100, {"optimal": ok(False)}, stock)
    assert settled.candidate is ours and settled.record["rule"] == "stock fails"
    assert flipped == []


def test_sm90_decision_stands_when_nothing_spills():
    ours = candidate("optimal", False)
    settled, flipped = run(ours, candidate("x", True), SM90, {"optimal": ok(False)}, ok(True))
    assert settled.candidate is ours and settled.record["rule"] == "measured target"
    assert settled.record["stock"]["specialized"] is True
    assert flipped == []


def test_spilling_choice_gives_way_to_the_other_decision():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True)}
    settled, _ = run(ours, other, SM90, builds, stock=ok(True))
    assert settled.candidate is other
    assert settled.record["rule"] == "spill check"
    assert "1664 B spilled" in settled.record["evidence"]


def test_spilling_choice_gives_way_to_one_spilling_at_most_half():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    half = BinaryUsage(255, 832, 832, 800, True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True, half)}
    settled, _ = run(ours, other, SM90, builds, stock=ok(False))
    assert settled.candidate is other and settled.record["rule"] == "spill check"


def test_serialized_wgmmas_without_a_spill_keep_the_decision():
    """The H200 sweep: ptxas notes serialized wgmmas on unspecialized 8-warp GEMMs that
    run as fast as stock's; switching those to a specialized plan made them 1.5-3x slower."""
    ours = candidate("optimal", False)
    serialized = BinaryUsage(90, 0, 0, 0, True)
    builds = {"optimal": ok(False, serialized), "heuristic, forced": ok(True)}
    settled, flipped = run(ours, candidate("heuristic, forced", True), SM90, builds, ok(False))
    assert settled.candidate is ours and flipped == []


def test_spilling_choice_stays_when_the_other_spills_nearly_as_much_or_fails():
    """A few spilled bytes fewer is no reason to swap: on the H100 (Triton 3.6) kernels that
    spilled 2-29% fewer bytes ran no faster, some 1.5x slower."""
    ours = candidate("optimal", False)
    worse = BinaryUsage(255, 2000, 2000, 2000, True)
    less = BinaryUsage(255, 1296, 1296, 1280, True)  # 22% fewer than SPILLING's 1664
    for other_build in (ok(True, worse), ok(True, less), Built("error", reason="boom")):
        other = candidate("heuristic, forced", True)
        builds = {"optimal": ok(False, SPILLING), "heuristic, forced": other_build}
        settled, flipped = run(ours, other, SM90, builds, stock=ok(False))
        assert settled.candidate is ours and flipped == ["optimal"]


def test_stocks_decision_that_spills_is_undone_by_the_spill_check():
    ours, other = candidate("optimal", True, 100), candidate("unspecialized", False, 100)
    builds = {"optimal": ok(True), "unspecialized": ok(False, SPILLING)}
    settled, _ = run(ours, other, SM100, builds, stock=ok(False, CLEAN))
    assert settled.candidate is ours and settled.record["rule"] == "spill check"


def test_stocks_decision_not_buildable_keeps_ours():
    ours, other = candidate("optimal", False), candidate("triton", True, None)
    builds = {"optimal": ok(False), "triton": ok(False)}  # Triton's partitioner declined
    settled, _ = run(ours, other, SM100, builds, stock=ok(True))
    assert settled.candidate is ours
    assert settled.record["rule"] == "stock's decision unbuildable"


def test_unbuilt_ours_is_not_checked():
    ours = candidate("optimal", True)
    settled, flipped = run(
        ours, ours, SM100, {"optimal": Built("unavailable", reason="no guard")}, ok(False)
    )
    assert settled.candidate is ours and settled.record["rule"] == "not checked" and not flipped


@pytest.mark.parametrize(
    "kwargs, keep, rule",
    [
        ({"measured": True, "stock_specialized": True}, True, "measured target"),
        ({"stock_specialized": None}, True, "stock unknown"),
        ({"stock_specialized": False}, True, "same decision"),
        ({"stock_specialized": True, "stock_spills_more": True}, True, "stock spills"),
        ({"stock_specialized": True, "modeled_gain": 0.30}, True, "modeled gain"),
        ({"stock_specialized": True, "modeled_gain": 0.10}, False, None),
        ({"stock_specialized": True, "modeled_gain": UNMEASURED_REVERSAL_MARGIN}, False, None),
    ],
)
def test_reversal_rules(kwargs, keep, rule):
    args = {"measured": False, "ours_specialized": False, **kwargs}
    decision = reversal(**args)
    assert decision.keep_ours is keep
    if rule:
        assert decision.rule == rule


def test_a_spilling_plan_of_stocks_decision_gives_way_to_tritons_partition_first():
    """sm_100 persistent GEMMs: stock specializes without a spill, the forced heuristic plan
    spills; Triton's partitioner (stock's own partition) is kept, not the unspecialized
    kernel."""
    ours, forced = candidate("optimal", False), candidate("heuristic, forced", True)
    theirs = Candidate("triton", "<triton>", [], True, triton_decides=True)
    builds = {
        "optimal": ok(False),
        "heuristic, forced": ok(True, SPILLING),
        "triton": ok(True),
    }
    settled = settle(
        ours, SM100, lambda c: forced, lambda c: builds[c.label], lambda: ok(True), lambda: theirs
    )
    assert settled.candidate is theirs
    assert settled.record["rule"] == "unmeasured target: stock's decision"
    assert settled.record["triton"]["plan"] == "triton"


def test_without_a_better_triton_partition_the_spill_check_still_decides():
    ours, forced = candidate("optimal", False), candidate("heuristic, forced", True)
    theirs = Candidate("triton", "<triton>", [], True, triton_decides=True)
    builds = {
        "optimal": ok(False),
        "heuristic, forced": ok(True, SPILLING),
        "triton": ok(True, SPILLING),
    }
    settled = settle(
        ours, SM100, lambda c: forced, lambda c: builds[c.label], lambda: ok(True), lambda: theirs
    )
    assert settled.candidate is ours and settled.record["rule"] == "spill check"

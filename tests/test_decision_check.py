"""The drop-in's decision check on made-up builds: stock's decision on a target never
measured, ptxas's spills, and what the report records (no Triton needed)."""

from dataclasses import dataclass

import pytest

from ws_solver.model.decision import UNMEASURED_REVERSAL_MARGIN, reversal
from ws_solver.model.target import SM90, SM100
from ws_solver.triton.dropin.decision_check import Built, Candidate, settle
from ws_solver.triton.toolchain.binary_usage import BinaryUsage
from ws_solver.triton.toolchain.sass_loops import LoopSpills

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


def test_sm90_decision_stands_when_nothing_spills_and_stock_is_not_built():
    """On a measured target stock's build weighs only when ours fails or spills: here it is
    never asked for (one ptxas run less per compile), and the record says so."""
    ours = candidate("optimal", False)
    asked = []

    def stock() -> Built:
        asked.append(1)
        return ok(True)

    settled = settle(ours, SM90, lambda c: candidate("x", True), lambda c: ok(False), stock)
    assert settled.candidate is ours and settled.record["rule"] == "measured target"
    assert settled.record["stock"]["status"] == "not built" and asked == []


def test_sm90_stock_is_built_when_ours_spills():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True, SPILLING)}
    settled, _ = run(ours, other, SM90, builds, stock=ok(True))
    assert settled.record["stock"]["specialized"] is True
    assert settled.record["rule"] == "spill check: stock"


def test_spilling_choice_gives_way_to_the_other_decision():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True)}
    stock_fails = Built("error", reason="tensor descriptor block and tensor types must match")
    settled, _ = run(ours, other, SM90, builds, stock=stock_fails)
    assert settled.candidate is other
    assert settled.record["rule"] == "spill check"
    assert "1664 B spilled" in settled.record["evidence"]


def test_spilling_choice_gives_way_to_one_spilling_at_most_half():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    half = BinaryUsage(255, 832, 832, 800, True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True, half)}
    settled, _ = run(ours, other, SM90, builds, stock=Built("error", reason="boom"))
    assert settled.candidate is other and settled.record["rule"] == "spill check"


def test_fewer_bytes_spilled_in_the_hot_loop_do_not_relieve():
    """Issue 48 (H100, Triton 3.9, persistent pointer GEMM t128x128x128 gelu flat w4 s2):
    Triton's partition spilled 36 B to ours' and stock's 72 B, was kept by bytes, and ran
    0.61x stock's speed: it reloads its loop counter every K step, they spill only around
    the epilogue. Where the spills sit weighs first: ours stands, and the record says why."""
    ours, other = candidate("optimal", False), candidate("triton", True)
    hot = LoopSpills(loops=2, total=20, in_loops=13, hot=7)
    cold = LoopSpills(loops=2, total=36, in_loops=36, hot=0)
    spill_72 = BinaryUsage(255, 72, 72, 72, False, cold)
    builds = {
        "optimal": ok(False, spill_72),
        "triton": ok(False, BinaryUsage(255, 32, 36, 44, False, hot)),
    }
    settled, flipped = run(ours, other, SM90, builds, stock=ok(False, spill_72))
    assert settled.candidate is ours and flipped == ["optimal"]
    assert settled.record["rule"] == "measured target"
    assert (
        "triton 255 registers, 36 B spilled, 7 spill instructions in hot loops"
        in (settled.record["spill_check"])
    )
    # By bytes alone (the SASS unread) the 36 B build relieves the 72 B one, as before.
    builds["triton"] = ok(False, BinaryUsage(255, 32, 36, 44, False))
    settled, _ = run(ours, other, SM90, builds, stock=ok(False, spill_72))
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
        settled, flipped = run(ours, other, SM90, builds, stock=ok(False, SPILLING))
        assert settled.candidate is ours and flipped == ["optimal"]


def test_stocks_decision_that_spills_is_undone_by_the_spill_check():
    ours, other = candidate("optimal", True, 100), candidate("unspecialized", False, 100)
    builds = {"optimal": ok(True), "unspecialized": ok(False, SPILLING)}
    settled, _ = run(ours, other, SM100, builds, stock=Built("error", reason="boom"))
    assert settled.candidate is ours and settled.record["rule"] == "stock fails"
    # Stock's decision, taken, spills in our build; stock's own kernel does not: it is kept.
    settled, _ = run(ours, other, SM100, builds, stock=ok(False, CLEAN))
    assert settled.candidate.stock and settled.record["rule"] == "spill check: stock"
    assert settled.record["kept"] == "stock" and settled.record["specialized"] is False


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
    # Ours unspecialized and stock's kernel spill nothing: stock's, the default answer, wins.
    assert settled.candidate.stock and settled.record["rule"] == "spill check: stock"
    assert "optimal 168 registers, no spill" in settled.record["evidence"]


def test_tritons_partition_of_the_other_decision_is_not_taken():
    """Triton's partitioner is tried for the same decision only: a build of it that came out
    unspecialized (spilling nothing) does not replace a specialized choice."""
    ours, forced = candidate("optimal", False), candidate("heuristic, forced", True)
    theirs = Candidate("triton", "<triton>", [], True, triton_decides=True)
    builds = {
        "optimal": ok(False, SPILLING),
        "heuristic, forced": ok(True, BinaryUsage(255, 1200, 1200, 1200, False)),
        "triton": ok(False),  # Triton's partitioner declined to specialize
    }
    stock_spills_less = ok(True, BinaryUsage(255, 1000, 1000, 1000, False))
    settled = settle(
        ours,
        SM100,
        lambda c: forced,
        lambda c: builds[c.label],
        lambda: stock_spills_less,
        lambda: theirs,
    )
    assert settled.record["triton"]["specialized"] is False
    assert settled.candidate is forced and settled.record["kept"] == "heuristic, forced"


# -- stock's own kernel as a candidate (issue 48) ---------------------------------------------
def test_the_two_consumer_group_case_keeps_stocks_kernel():
    """sm_90, 4 warps, 128x256: no plan of ours fits the registers, the unspecialized kernel
    spills 1,696 B, Triton's partitioner on the generic route spills too; stock's own kernel
    (two consumer warp groups) spills nothing and is kept."""
    ours = candidate("optimal", False)
    theirs = Candidate("triton", "<triton>", [], True, triton_decides=True)
    spills = BinaryUsage(255, 1696, 1696, 1696, False)
    builds = {"optimal": ok(False, spills), "triton": ok(True, SPILLING)}
    settled, flipped = run(ours, theirs, SM90, builds, stock=ok(True, CLEAN))
    assert settled.candidate.stock and settled.candidate.strategy == "stock"
    assert settled.record["rule"] == "spill check: stock"
    assert "stock 168 registers, no spill" in settled.record["evidence"]
    assert "1696 B spilled" in settled.record["evidence"]
    # Nothing spills less than stock's kernel here: the other decision is not built.
    assert flipped == [] and "other" not in settled.record


def test_the_other_decision_without_a_spill_beats_a_spilling_stock():
    ours, other = candidate("optimal", False), candidate("heuristic, forced", True)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": ok(True)}
    stock = ok(True, BinaryUsage(255, 64, 64, 64, False))  # relieves, but spills
    settled, _ = run(ours, other, SM90, builds, stock=stock)
    assert settled.candidate is other and settled.record["rule"] == "spill check"


def test_stock_spilling_as_much_is_not_kept():
    ours = candidate("optimal", False)
    builds = {"optimal": ok(False, SPILLING), "heuristic, forced": Built("error", reason="x")}
    settled, _ = run(ours, candidate("heuristic, forced", True), SM90, builds, ok(True, SPILLING))
    assert settled.candidate is ours


@pytest.mark.parametrize("status", ["error", "crash", "hang"])
def test_ours_not_built_where_stock_builds_keeps_stock(status):
    """sm_100, a persistent GEMM whose plans need more tensor memory than the SM has: stock
    builds it within 512 columns, so enabling ws_solver must not turn it into an error."""
    ours = candidate("optimal", True)
    why = "Triton's lowering needs 768 columns of tensor memory, more than the SM's 512"
    settled, flipped = run(ours, ours, SM100, {"optimal": Built(status, reason=why)}, ok(True))
    assert settled.candidate.stock and settled.record["rule"] == "stock: ours not built"
    assert "768 columns" in settled.record["evidence"] and not flipped


def test_neither_built_is_not_checked():
    ours = candidate("optimal", True)
    builds = {"optimal": Built("error", reason="boom")}
    settled, _ = run(ours, ours, SM100, builds, Built("error", reason="stock boom"))
    assert settled.candidate is ours and settled.record["rule"] == "not checked"

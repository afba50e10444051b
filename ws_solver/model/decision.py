"""When `optimal` departs from the heuristic's plan: only for a modeled gain larger than the
cost model's measured error.

On the H200 plan sweep (benchmarks/results/2026-12-01-plan-sweep, `fit_sweep.py
--rules-today`), over the plans today's model can still choose (73 distinct plan binaries
of 24 sm_90 configs, 133 pairs), the modeled relative difference between two plans of one
config missed the measured one by a median of 2.6% and by 6.6% or less in 90% of the pairs;
fitted with one kernel family left out, the margin ranged from 5.6% to 6.8%, and on every
family left out the rule ended within noise of the best plan measured. Out of sample (the
same cubins timed again by `ws-solver tune`, 2026-12-01-tune), 93% of 41 pairs were within
the margin. A smaller modeled gain is not evidence that the optimum is faster in silicon.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import inf

# The 90th percentile of |measured - modeled| relative time difference on the sweep (defined
# with the solve options whose default it is).
from ..core.options import DEPARTURE_MARGIN
from .cost_table import cost_table
from .graph import LoopGraph
from .mma_stalls import computed_ahead, stores_tile
from .target import Target


@dataclass(frozen=True)
class Departure:
    """Whether to take the optimum over the heuristic's plan, and why."""

    depart: bool
    modeled_gain: float  # (heuristic II - optimum II) / heuristic II
    margin: float

    @property
    def decision(self) -> str:
        return "optimum" if self.depart else "heuristic kept"

    def reason(self) -> str:
        relation = ">" if self.depart else "<="
        gain, margin = 100 * self.modeled_gain, 100 * self.margin
        return f"modeled gain {gain:.1f}% {relation} margin {margin:.1f}%"


def departure(
    heuristic_ii: int | None, optimum_ii: int, margin: float = DEPARTURE_MARGIN
) -> Departure:
    """Take the optimum when the heuristic has no valid plan (II None) or when the optimum's
    modeled gain exceeds `margin`; a margin of 0 takes any strictly better optimum."""
    if heuristic_ii is None or heuristic_ii <= 0:
        return Departure(True, 1.0, margin)
    gain = (heuristic_ii - optimum_ii) / heuristic_ii
    return Departure(gain > margin, gain, margin)


# -- specializing at all ------------------------------------------------------------------------
# In a loop that stores its output tile (persistent and grouped GEMMs: `stores_tile`) the model
# charges the once-per-tile epilogue to every iteration, so a small modeled gain there is an
# artifact of that, not evidence. There a specialized plan must beat one partition by more than
# the model's median error on the plan sweep above (2.6%). On the H200 config-space sweep
# (benchmarks/results/2026-12-04-configspace-h200, Triton 3.6) the 8-warp persistent GEMMs the
# model still specialized had modeled gains of 0.4-0.6% (8 configs; 6 ran 4-9% slower
# specialized, 2 within 1%); every other specialized config's gain was 6.5% or more. Loops
# that store no tile keep any strict gain: Triton 3.9's `ahead` attention d128 is modeled 0.8%
# faster specialized and ran 5-9% faster (2026-12-02-triton39-h200-run18).
TILE_LOOP_FLOOR = 0.026

# A loop that computes a wgmma one iteration ahead (`computed_ahead`) already overlaps its MMAs
# with the rest of its iteration unspecialized; specialized, it adds a hand-off to every
# iteration, which a short step cannot hide. On the config-space sweep (H200, both Triton
# versions) attention d64 m128n64 w8 `ahead` at 3 stages, whose MMAs take 512 tensor cycles
# an iteration, ran 10-13% slower specialized (4 configs), while the `ahead` loops of 1024
# (d64 m128n128, d128 m128n64) ran 6.5-9.8% faster (3.9; 4 configs): the model sees neither
# (its gains: +0.7 to +14.2% for the first, +0.8 to +7.1% for the second). Out of sample
# (2026-12-06-attention-oos-h200, an H100): the 512-cycle shape at 2 and 4 stages, causal or
# not, ran 6.7-14.8% slower specialized on both versions (8 of 8), the 1024- and 2048-cycle
# ones 3.7-19.3% faster (3.9, 10 of 10). No loop between 512 and 1024 was measured: the rule
# takes the edge the data show, so that it turns off only what was measured to lose.
SHORT_AHEAD_TENSOR_CYCLES = 512


@dataclass(frozen=True)
class Floor:
    """The least modeled gain over one partition that specializes a loop, and the kind of
    loop that sets it (for reports); an infinite gain: the loop is never specialized."""

    gain: float
    loop: str = ""


NO_FLOOR = Floor(0.0)


def specialize_floor(graph: LoopGraph, target: Target) -> Floor:
    """The floor for `graph`'s loop on `target`."""
    table = cost_table(graph, target)
    ahead = computed_ahead(graph, table.wgmmas)
    tensor = sum(table.nodes[n].units.get("tensor", 0) for n in table.wgmmas)
    if ahead and tensor <= SHORT_AHEAD_TENSOR_CYCLES:
        loop = (
            f"a loop that computes a wgmma ahead, whose MMAs take {tensor} tensor cycles an "
            f"iteration (at most {SHORT_AHEAD_TENSOR_CYCLES}: too short a step to hide the "
            "hand-offs)"
        )
        return Floor(inf, loop)
    if stores_tile(graph):
        return Floor(TILE_LOOP_FLOOR, "a loop that stores its tile")
    return NO_FLOOR


def specializing_pays(ii: int, single_ii: int, floor: Floor) -> bool:
    """Whether a specialized plan of II `ii` beats one partition's `single_ii` by more than
    `floor`'s gain of the latter."""
    return single_ii > 0 and (single_ii - ii) / single_ii > floor.gain


def below_floor(ii: int, single_ii: int, floor: Floor) -> str:
    """The reason a specialized plan gives way to one partition, for reports."""
    gain = 100 * (single_ii - ii) / single_ii if single_ii > 0 else 0.0
    compared = f"modeled gain {gain:.1f}% over one partition (II {ii} vs {single_ii})"
    if floor.gain == inf:
        return f"not specialized: {floor.loop}; {compared}"
    return (
        f"not specialized: {compared} is within the model's error on {floor.loop} "
        f"({100 * floor.gain:.1f}%)"
    )


# -- reversing stock Triton's decision on a target never measured ------------------------------
# On a target whose rates were never checked against silicon (`Target.measured` False), the
# model's II is the only argument for specializing where stock Triton does not (or the
# reverse). On sm_90, where it could be checked, a modeled tie hid a 7x loss (issue 34), and
# the model's measured error on plans it was built for is 6.6%; an unchecked target's error
# is unknown, so a reversal needs a modeled gain several times that. A policy, not a fit:
# remove it for a target once its measured check exists.
UNMEASURED_REVERSAL_MARGIN = 0.25


@dataclass(frozen=True)
class Reversal:
    """Whether ws_solver's specialize decision stands against stock Triton's, and why."""

    keep_ours: bool
    rule: str  # what decided, for reports
    evidence: str  # one line

    def to_dict(self) -> dict:
        return {"keep_ours": self.keep_ours, "rule": self.rule, "evidence": self.evidence}


def reversal(
    measured: bool,
    ours_specialized: bool,
    stock_specialized: bool | None,
    stock_failure: str = "",
    stock_spills_more: bool = False,
    modeled_gain: float | None = None,
    margin: float = UNMEASURED_REVERSAL_MARGIN,
) -> Reversal:
    """Keep ws_solver's decision, or take stock's, for one kernel.

    `stock_specialized`: None when stock's decision is unknown. `stock_failure`: why stock
    Triton fails to compile the kernel ("" when it compiles). `stock_spills_more`: ptxas
    shows stock's kernel spilling (or serializing its wgmmas) where ours does less.
    `modeled_gain`: the model's gain of our decision over the other one, relative to ours
    ((II of the other - II of ours) / II of ours), None when not known."""
    ours = "specialize" if ours_specialized else "not specialize"
    if measured:
        return Reversal(
            True,
            "measured target",
            "the model's decision stands (its rates were measured on this target's GPUs; "
            "your kernel did not run)",
        )
    if stock_failure:
        return Reversal(True, "stock fails", f"stock Triton fails on the kernel: {stock_failure}")
    if stock_specialized is None:
        return Reversal(True, "stock unknown", "stock Triton's decision could not be read")
    if stock_specialized == ours_specialized:
        return Reversal(True, "same decision", f"stock Triton and ws_solver both {ours}")
    if stock_spills_more:
        return Reversal(True, "stock spills", "ptxas: stock's kernel spills where ours does not")
    if modeled_gain is not None and modeled_gain > margin:
        return Reversal(
            True,
            "modeled gain",
            f"modeled gain {100 * modeled_gain:.1f}% > {100 * margin:.0f}% margin for a target "
            "never measured",
        )
    gain = "unknown" if modeled_gain is None else f"{100 * modeled_gain:.1f}%"
    stock = "specializes" if stock_specialized else "does not specialize"
    return Reversal(
        False,
        "unmeasured target: stock's decision",
        f"stock Triton {stock}; ws_solver's modeled gain {gain} is not above the "
        f"{100 * margin:.0f}% margin for a target never measured",
    )

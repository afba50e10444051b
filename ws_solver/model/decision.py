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

# The 90th percentile of |measured - modeled| relative time difference on the sweep.
DEPARTURE_MARGIN = 0.0664


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

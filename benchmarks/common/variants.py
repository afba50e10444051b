"""Plan-sweep variants: one drop-in strategy plus the knobs the drop-in controls.

The names are those of ``ws_solver.core.candidates`` (``explore:2``, ``heuristic~ov0``,
``optimal~wg0``, ``none~s+1``), less the names the bench gives meanings of its own: a bare
``none``/``heuristic``/``optimal`` is a bench strategy, and ``triton`` variants are the bench's
``triton*`` strategies (see bench_strategies.DROPIN_SETTINGS).
"""

from __future__ import annotations

from ws_solver.core.candidates import Candidate as Variant
from ws_solver.core.candidates import parse as parse_candidate
from ws_solver.core.strategy import EXPLORE, PIPELINE_STRATEGIES

PLANS = tuple(s.value for s in PIPELINE_STRATEGIES)  # explore:K aside

__all__ = ["PLANS", "Variant", "is_plan_only", "parse", "sweep"]


def parse(name: str) -> Variant | None:
    """The variant a name stands for; None when it is not a sweep variant's name."""
    try:
        variant = parse_candidate(name)
    except ValueError:
        return None
    if variant.plan == "triton" or name in PLANS:
        return None
    return variant


def sweep(ranks: int) -> list[Variant]:
    """The variants the plan sweep compiles for every config: every plan the model ranks
    first to `ranks`-th, the drop-in's knobs flipped one at a time on the heuristic's and the
    modeled optimum's plans, and num_stages one either side for those two and for `none`."""
    out = [Variant(f"{EXPLORE}{k}") for k in range(ranks)]
    for plan in ("heuristic", f"{EXPLORE}0"):
        out += [
            Variant(plan, overlap_wgmma=False),
            Variant(plan, release_per_warp_group=False),
            Variant(plan, take_turns=True),
        ]
    for plan in ("none", "heuristic", f"{EXPLORE}0"):
        out += [Variant(plan, stage_delta=-1), Variant(plan, stage_delta=+1)]
    return out


def is_plan_only(name: str) -> bool:
    """A variant that changes only the plan (default knobs and num_stages)."""
    v = parse(name)
    return v is None or (
        v.overlap_wgmma and v.release_per_warp_group and not v.take_turns and not v.stage_delta
    )

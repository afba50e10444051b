"""Plan-sweep variants: one drop-in strategy plus the knobs the drop-in controls.

A variant's name is the drop-in strategy, then optional knob suffixes, e.g. ``explore:2``,
``heuristic~ov0`` (wgmma waits left where Triton's pipeliner put them), ``optimal~wg0``
(Triton's partition-wide stage releases kept), ``none~s+1`` (the config's ``num_stages`` plus
one). Names carry no commas or spaces, so they pass through ``--strategies`` and job names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ws_solver.strategy import EXPLORE, PIPELINE_STRATEGIES

PLANS = tuple(s.value for s in PIPELINE_STRATEGIES)  # explore:K aside
SEP = "~"


@dataclass(frozen=True)
class Variant:
    plan: str  # a drop-in strategy: none, heuristic, optimal or explore:K
    overlap_wgmma: bool = True
    release_per_warp_group: bool = True
    stage_delta: int = 0  # added to the config's num_stages

    @property
    def name(self) -> str:
        knobs = []
        if not self.overlap_wgmma:
            knobs.append("ov0")
        if not self.release_per_warp_group:
            knobs.append("wg0")
        if self.stage_delta:
            knobs.append(f"s{self.stage_delta:+d}")
        return SEP.join([self.plan, *knobs])

    def enable_keywords(self) -> dict:
        return {
            "overlap_wgmma": self.overlap_wgmma,
            "release_per_warp_group": self.release_per_warp_group,
        }

    def num_stages(self, config_stages: int) -> int:
        return config_stages + self.stage_delta


def is_plan(text: str) -> bool:
    rank = text[len(EXPLORE) :]
    return text in PLANS or (text.startswith(EXPLORE) and rank.isdigit())


def parse(name: str) -> Variant | None:
    """The variant a name stands for; None when it is not a sweep variant's name."""
    plan, *knobs = name.split(SEP)
    if not is_plan(plan) or (plan in PLANS and not knobs):
        return None
    fields: dict = {}
    for knob in knobs:
        if knob == "ov0":
            fields["overlap_wgmma"] = False
        elif knob == "wg0":
            fields["release_per_warp_group"] = False
        elif knob[:1] == "s" and knob[1:2] in "+-" and knob[2:].isdigit():
            fields["stage_delta"] = int(knob[1:])
        else:
            return None
    return Variant(plan, **fields)


def sweep(ranks: int) -> list[Variant]:
    """The variants the plan sweep compiles for every config: every plan the model ranks
    first to `ranks`-th, the drop-in's knobs flipped one at a time on the heuristic's and the
    modeled optimum's plans, and num_stages one either side for those two and for `none`."""
    out = [Variant(f"{EXPLORE}{k}") for k in range(ranks)]
    for plan in ("heuristic", f"{EXPLORE}0"):
        out += [Variant(plan, overlap_wgmma=False), Variant(plan, release_per_warp_group=False)]
    for plan in ("none", "heuristic", f"{EXPLORE}0"):
        out += [Variant(plan, stage_delta=-1), Variant(plan, stage_delta=+1)]
    return out

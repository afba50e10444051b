"""Names for what the drop-in can build from one kernel: a strategy plus the drop-in's knobs.

A name is a drop-in strategy, then optional ``~`` knob suffixes:

- ``ov0``: sm_90 wgmma waits left where Triton's pipeliner put them (``overlap_wgmma=False``);
- ``wg0``: Triton's partition-wide stage releases kept (``release_per_warp_group=False``);
- ``tt1``: the two warp groups of such a consumer take turns at the tensor cores
  (``take_turns=True``);
- ``s+N`` / ``s-N``: the launch's ``num_stages`` plus or minus N.

For example ``explore:2`` (the plan of rank 2, as everywhere), ``heuristic~ov0``,
``none~s+1``, ``triton~ov0~wg0`` (Triton's partitioner with only the Hopper fix). Names carry
no commas or spaces, so they pass through command lines and job names. The plan sweep
(``benchmarks/common/variants.py``) and the autotuner (``ws_solver.triton.autotune``) share this
grammar; the strategy part is ``core.strategy``'s.

A *spec* in an autotuner's ``candidates`` is a name, or ``top:N`` for the model's N best
plans, ``explore:0`` .. ``explore:N-1`` (with the same knob suffixes on each).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from .strategy import BUILD_STRATEGIES, EXPLORE, parse_strategy, top_count

PLANS = tuple(s.value for s in BUILD_STRATEGIES)  # explore:K aside
SEP = "~"
# What ws_solver.triton.autotune tries unless told otherwise, and what it builds untuned: the
# strategies verified over the config space. Not the model's next-best plans (`top:N`): on
# the H200, explore:1 and explore:2 of gemm_tma t128x128x128 w8 s2 fault at launch
# ("unspecified launch failure", which ends the process's CUDA context), and no plan past
# rank 0 has been verified outside the corpus (benchmarks/results/2026-12-04-autotune-h200).
# Stock Triton's own kernel is always one: tuning never ends slower than what the user had
# without ws_solver (its two-consumer-group sm_90 GEMMs are none of ws_solver's builds).
DEFAULT_CANDIDATES = ("stock", "heuristic", "optimal", "none", "triton")
DEFAULT_STRATEGY = "optimal"
# What the drop-in's measured mode times unless ``enable(candidates=...)`` says otherwise:
# stock's kernel (its default answer, and a candidate however the list is given), the drop-in's
# default strategy, the unspecialized kernel, and stock's and optimal's builds with one more
# pipeline stage. Chosen on the H100 under Triton 3.6 (the candidates that won 20 or more of
# 165 configs; heuristic, triton and explore:1 won 0-8 and leaving them out cost 0.001-0.002
# of the geomean), then timed as the default under Triton 3.9: 1.205x stock, n 102
# (benchmarks/results/2026-12-07-measured-candidates-h100). About half of that is the stage:
# stock with one more stage alone is 1.11x stock there.
MEASURED_CANDIDATES = ("stock", "optimal", "none", "stock~s+1", "optimal~s+1")
MEASURED_DEFAULT = "stock"


@dataclass(frozen=True)
class Candidate:
    """One drop-in build: a strategy and the knobs it is built with."""

    plan: str  # a drop-in strategy: optimal, heuristic, triton, none or explore:K
    overlap_wgmma: bool = True
    release_per_warp_group: bool = True
    stage_delta: int = 0  # added to the launch's num_stages
    take_turns: bool = False

    @property
    def name(self) -> str:
        knobs = []
        if not self.overlap_wgmma:
            knobs.append("ov0")
        if not self.release_per_warp_group:
            knobs.append("wg0")
        if self.take_turns:
            knobs.append("tt1")
        if self.stage_delta:
            knobs.append(f"s{self.stage_delta:+d}")
        return SEP.join([self.plan, *knobs])

    def enable_keywords(self) -> dict:
        """The ``ws_solver.triton.enable`` keywords for the knobs (the strategy aside)."""
        return {
            "overlap_wgmma": self.overlap_wgmma,
            "release_per_warp_group": self.release_per_warp_group,
            "take_turns": self.take_turns,
        }

    def num_stages(self, base: int) -> int:
        return base + self.stage_delta


# The unspecialized kernel with none of ws_solver's rewrites: what candidates are checked
# against (Triton's own sm_90 route for a warp_specialize loop is the racy one).
REFERENCE = Candidate("none", overlap_wgmma=False, release_per_warp_group=False)


def parse(name: str) -> Candidate:
    """The candidate a name stands for; ValueError naming the bad part otherwise."""
    plan, *knobs = name.split(SEP)
    try:
        plan = str(parse_strategy(plan, BUILD_STRATEGIES))
    except ValueError as e:
        raise ValueError(f"{name!r}: {e}") from None
    fields: dict = {}
    for knob in knobs:
        if knob == "ov0":
            fields["overlap_wgmma"] = False
        elif knob == "wg0":
            fields["release_per_warp_group"] = False
        elif knob == "tt1":
            fields["take_turns"] = True
        elif knob[:1] == "s" and knob[1:2] in ("+", "-") and knob[2:].isdigit():
            fields["stage_delta"] = int(knob[1:])
        else:
            raise ValueError(f"{name!r}: unknown knob {knob!r}; use ov0, wg0, tt1, s+N or s-N")
    return Candidate(plan, **fields)


def expand(specs: Iterable[str] | str) -> tuple[Candidate, ...]:
    """The candidates a list of specs names, in order, each once (``top:N`` is ranks
    0..N-1). A string is split at commas."""
    if isinstance(specs, str):
        specs = [s for s in (part.strip() for part in specs.split(",")) if s]
    out: dict[str, Candidate] = {}
    for spec in specs:
        head, sep, knobs = spec.partition(SEP)
        count = top_count(head)
        if count is None:
            found = [parse(spec)]
        else:
            first = parse(f"{EXPLORE}0{sep}{knobs}")
            found = [replace(first, plan=f"{EXPLORE}{k}") for k in range(count)]
        out.update((c.name, c) for c in found)
    if not out:
        raise ValueError("no candidates given")
    return tuple(out.values())


def measured_names(specs: Iterable[str] | str) -> tuple[str, ...]:
    """Measured mode's candidates from ``specs`` (``expand``'s grammar): their names, stock's
    kernel first when the list leaves it out (it is the default answer: measuring can only
    add to it)."""
    names = tuple(c.name for c in expand(specs))
    return names if MEASURED_DEFAULT in names else (MEASURED_DEFAULT, *names)

"""The strategies that plan a warp-specialized loop, by name.

`Strategy` is a string enum: a member equals its name ("optimal" == Strategy.OPTIMAL) and
prints as it, so plans, reports and cache keys spell strategies as before. A parametrised
family is a `str` subclass of its own, parsed here too: `Explore` ("explore:K", the K-th best
plan under the cost model; rank K everywhere). `parse_strategy` turns a name from a user (CLI,
`enable()`, an autotuner's candidate) into one of them, once: a value it already parsed
passes through unread. The autotuner's "top:N" (the N best plans, explore:0 .. explore:N-1)
is a set of strategies, not one; `top_count` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Strategy(str, Enum):
    OPTIMAL = "optimal"  # the CP-SAT optimum under the cost model, warm-started by the heuristic
    HEURISTIC = "heuristic"  # the incremental-merge heuristic
    TRITON = "triton"  # Triton's own partitioner (the drop-in only)
    NONE = "none"  # no warp specialization
    STOCK = "stock"  # stock Triton's own kernel, as if ws_solver were off (the drop-in only)
    # The fastest of stock's kernel and ws_solver's builds, timed at a kernel's first launch
    # (the drop-in only: `ws_solver.triton.dropin.measured`).
    MEASURED = "measured"

    def __str__(self) -> str:
        return self.value


EXPLORE = "explore:"
# At most this many plans per loop (explore --k; explore:K has K < MAX_PLANS): each is a solve
# of up to the time limit, so K bounds the time (explore:99999999 compiled for 300 s and
# more, silently).
MAX_PLANS = 32


class Explore(str):
    """ "explore:K": each loop's K-th best plan under the cost model (`encode.alternatives`);
    a loop with no K-th plan keeps its best one (rank 0, the modeled optimum). Falls back as
    "optimal" does in the drop-in. Only a well-formed name makes one (ValueError)."""

    def __new__(cls, text: str) -> Explore:
        if explore_rank(str(text)) is None:
            raise ValueError(f"bad strategy {str(text)[:40]!r}: write explore:K")
        return super().__new__(cls, text)

    @property
    def rank(self) -> int:
        return int(self[len(EXPLORE) :])


# What the pipeline plans itself (Triton's partitioner runs inside Triton), besides explore:K.
PIPELINE_STRATEGIES = (Strategy.OPTIMAL, Strategy.HEURISTIC, Strategy.NONE)
# The drop-in's plans in fallback order: each, on a failure, tries the ones after it, then
# stock Triton's own kernel.
FALLBACK_ORDER = (Strategy.OPTIMAL, Strategy.HEURISTIC, Strategy.TRITON, Strategy.NONE)
# What one build of a kernel can be (an autotune candidate) besides explore:K: a plan, or
# stock Triton's own kernel.
BUILD_STRATEGIES = (*FALLBACK_ORDER, Strategy.STOCK)
# What the drop-in accepts besides explore:K: a build, or the measured choice among builds.
DROPIN_STRATEGIES = (*BUILD_STRATEGIES, Strategy.MEASURED)


def explore_rank(strategy: str) -> int | None:
    """K of "explore:K"; None for any other strategy name."""
    if not strategy.startswith(EXPLORE):
        return None
    rank = strategy[len(EXPLORE) :]
    if not rank.isdigit():
        raise ValueError(f"bad strategy {strategy!r}: write explore:K with K = 0, 1, 2, ...")
    if len(rank) > 6 or int(rank) >= MAX_PLANS:
        raise ValueError(
            f"bad strategy {strategy[:40]!r}: K is at most {MAX_PLANS - 1} "
            f"(explore lists at most {MAX_PLANS} plans per loop)"
        )
    return int(rank)


def parse_strategy(
    text: str, allowed: Iterable[Strategy] = PIPELINE_STRATEGIES, explore: bool = True
) -> Strategy | Explore:
    """The strategy named `text`: one of `allowed`, or explore:K when `explore`; ValueError
    naming the choices otherwise. A parsed value (a Strategy or an Explore) is only checked
    against `allowed`, not read again."""
    allowed = tuple(allowed)
    if isinstance(text, Explore) and explore:
        return text
    if isinstance(text, Strategy) and text in allowed:
        return text
    for strategy in allowed:
        if text == strategy.value:
            return strategy
    if explore and explore_rank(str(text)) is not None:
        return Explore(text)
    names = ", ".join([s.value for s in allowed] + (["explore:K"] if explore else []))
    raise ValueError(f"unknown strategy {str(text)!r}; choose from {names}")


TOP = "top:"


def top_count(spec: str) -> int | None:
    """N of an autotuner's "top:N" (the N best plans: explore:0 .. explore:N-1); None for any
    other spec; ValueError, one line, for a bad N."""
    if not spec.startswith(TOP):
        return None
    count = spec[len(TOP) :]
    if not count.isdigit() or len(count) > 6 or not 1 <= int(count) <= MAX_PLANS:
        raise ValueError(f"bad candidates {spec[:40]!r}: write top:N with N from 1 to {MAX_PLANS}")
    return int(count)

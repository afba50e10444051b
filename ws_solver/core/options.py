"""The solver options every entry point takes (--time-limit, --workers, --seed; ``enable()``,
``autotune``, the benchmarks): their defaults, one named constant each; their checks, a bad
value a one-line ``ValueError`` where it enters, never a failure deep inside OR-Tools or a
silent fallback later; `SolveOptions`, the one object each entry point builds and carries
whole; and `SolverBudget`, what of it reaches CP-SAT.

One default for solver workers everywhere: ``DEFAULT_WORKERS``. CP-SAT's search is
interleaved and its time limit deterministic, so a plan depends on the worker count but not
on the machine: with the same default the CLI, ``compare`` and the drop-in give the same
plan for the same loop, also when the time limit binds. Interleaved one task at a time, a
solve runs on one thread whatever the count (`SOLVE_THREADS`): more than one worker adds
CP-SAT's LNS workers to the turns, not threads.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace

from .clock import NO_DEADLINE, Deadline

# Seconds per loop where one plan is wanted: partition, explain, tune, enable(), solve().
DEFAULT_TIME_LIMIT = 10.0
# Seconds per loop (per solve) where many are planned to be compared: compare, explore, demo.
SURVEY_TIME_LIMIT = 2.0
# Two: with one worker CP-SAT runs its full-problem subsolvers only; with two or more its LNS
# workers take turns too, and on the scale families they find the plans the others do not
# (benchmarks/results/2026-12-04-solver-portfolio: within 5% of the best known on 74 of 80
# sm_100 runs, 67 with one worker; 2 and 4 workers give the same plans).
DEFAULT_WORKERS = 2
# Threads one solve keeps busy (interleave_batch_size 1: one task at a time), which is what a
# backend reserves per task.
SOLVE_THREADS = 1
DEFAULT_SEED = 0
MAX_WORKERS = 256  # CP-SAT threads per solve; more is a typo, not a machine
MAX_SEED = 2**31 - 1  # CP-SAT's random_seed is a 32-bit signed integer
# Seconds of any limit or timeout: far beyond any solve, and far inside what the clocks the
# waits use can take (threading.TIMEOUT_MAX is about 9.2e9 s; 1e10 failed every attempt with
# "OverflowError: timestamp out of range" and fell back).
MAX_SECONDS = 1e6
# `optimal` departs from the heuristic's plan only for a larger modeled gain: the 90th
# percentile of |measured - modeled| relative time difference on the plan sweep (the
# evidence is in model/decision.py's docstring).
DEPARTURE_MARGIN = 0.0664


@dataclass(frozen=True)
class SolverBudget:
    """What one CP-SAT search may spend and how it repeats: `time_limit` deterministic
    seconds, by `deadline` on the wall clock (the one clock every limit derives from), with
    `workers` threads and `seed`. Built from checked `SolveOptions`, so not checked again."""

    time_limit: float = DEFAULT_TIME_LIMIT
    workers: int = DEFAULT_WORKERS
    seed: int = DEFAULT_SEED
    deadline: Deadline = NO_DEADLINE

    def limited(self, time_limit: float) -> SolverBudget:
        """The same budget with `time_limit` deterministic seconds (a phase's share)."""
        return replace(self, time_limit=time_limit)


DEFAULT_BUDGET = SolverBudget()  # solve()'s
SURVEY_BUDGET = SolverBudget(SURVEY_TIME_LIMIT)  # alternatives()' (per round)


@dataclass(frozen=True)
class SolveOptions:
    """How each loop is planned: built once at an entry point, checked here, carried whole."""

    # Seconds for one loop: the wall-clock time of the whole strategy (heuristic, encoding,
    # search), and CP-SAT's deterministic time, whichever runs out first.
    time_limit: float = DEFAULT_TIME_LIMIT
    workers: int = DEFAULT_WORKERS
    seed: int = DEFAULT_SEED
    cache: bool = True  # reuse/store plans in ws_solver.pipeline.plancache (not part of the key)
    # Optimal only: depart from the heuristic's plan only for a larger modeled gain
    # (model/decision.py); None: always the modeled optimum (what `compare` shows).
    margin: float | None = DEPARTURE_MARGIN
    # Heuristic only: specialize whenever a valid plan exists, even when the cost model says
    # one partition is as fast (for measuring what specialization does; see decide()).
    force: bool = False
    # False: the time limit bounds CP-SAT's deterministic time only, so that a run repeats
    # exactly whatever the machine's load (compare and demo); the wall clock is unbounded.
    wall_clock: bool = True

    def __post_init__(self) -> None:
        """Bad values fail here, one line (ValueError), not inside OR-Tools later."""
        object.__setattr__(self, "time_limit", check_time_limit(self.time_limit))
        check_workers(self.workers)
        check_seed(self.seed)
        check_flag(self.cache, "cache")
        check_flag(self.force, "force")
        check_flag(self.wall_clock, "wall_clock")
        object.__setattr__(self, "margin", check_margin(self.margin))

    def deadline(self) -> Deadline:
        """The wall-clock deadline of one loop's strategy, from now (none without
        `wall_clock`)."""
        return Deadline.after(self.time_limit if self.wall_clock else None)

    def budget(self, deadline: Deadline = NO_DEADLINE) -> SolverBudget:
        """The CP-SAT budget of one loop, stopping at `deadline` too."""
        return SolverBudget(self.time_limit, self.workers, self.seed, deadline)


def check_time_limit(value: object, name: str = "time_limit") -> float:
    """A time limit in (deterministic) seconds: a finite number > 0 and at most
    ``MAX_SECONDS``. The one check of every limit and timeout, whether it comes from a
    caller (``enable()``, ``SolveOptions``), the command line or the environment."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    if value > MAX_SECONDS:
        raise ValueError(
            f"{name} must be at most {MAX_SECONDS:.0f} seconds (about 11 days), got {value!r}"
        )
    return float(value)


def check_workers(value: object, name: str = "workers") -> int:
    """A number of CP-SAT workers: an integer from 1 to MAX_WORKERS."""
    return _check_int(value, name, 1, MAX_WORKERS)


def check_seed(value: object, name: str = "seed") -> int:
    """A solver seed: an integer from 0 to MAX_SEED."""
    return _check_int(value, name, 0, MAX_SEED)


def check_flag(value: object, name: str) -> bool:
    """A switch: True or False (not a truthy string)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_optional_seconds(value: object, name: str) -> float | None:
    """A time limit that may be off: None or 0 (off), else as ``check_time_limit``."""
    if value is None or (not isinstance(value, bool) and value == 0):
        return None
    return check_time_limit(value, name)


def check_margin(value: object, name: str = "margin") -> float | None:
    """The departure margin (model/decision.py): None, or a modeled gain from 0 to 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be None or a number from 0 to 1, got {value!r}")
    if not 0 <= value <= 1:
        raise ValueError(f"{name} must be None or a number from 0 to 1, got {value!r}")
    return float(value)


def check_count(value: object, name: str, low: int, high: int) -> int:
    """A count given to a public function (``k``): an integer (not a bool, a float or text)
    from ``low`` to ``high``."""
    return _check_int(value, name, low, high)


def check_optional_name(value: object, name: str) -> str | None:
    """A name that may be left out (``target``, ``triton``): None or text."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be None or text, not {type(value).__name__}")
    return value


def check_source(value: object, name: str = "source") -> str | os.PathLike:
    """A TTGIR source given to a public function: a path (str or os.PathLike) or TTGIR text;
    TypeError naming ``name`` for anything else (bytes, a number)."""
    if isinstance(value, str | os.PathLike) and not isinstance(value, bytes):
        if isinstance(value, os.PathLike) and not isinstance(os.fspath(value), str):
            raise TypeError(f"{name} must be a path or TTGIR text, not a bytes path")
        if not isinstance(value, os.PathLike) and (not value or "\0" in value):
            raise ValueError(f"{name} {value[:40]!r} is neither a path nor TTGIR text")
        return value
    raise TypeError(f"{name} must be a path or TTGIR text, not {type(value).__name__}")


def _check_int(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value}")
    return value


# -- command-line text ------------------------------------------------------------------------
def parse_time_limit(text: str) -> float:
    """--time-limit S."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    return check_time_limit(value, "the time limit")


def parse_workers(text: str) -> int:
    """--workers N."""
    return check_workers(_integer(text), "the number of workers")


def parse_seed(text: str) -> int:
    """--seed K."""
    return check_seed(_integer(text), "the seed")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"not an integer: {text!r}") from None


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_flag(text: str) -> bool:
    """A switch written as text (an environment variable): 1/true/yes/on or 0/false/no/off."""
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"not a switch: {text!r}; write 1 or 0 (true/false, yes/no, on/off)")


def parse_optional_seconds(text: str, name: str) -> float | None:
    """Seconds that may be off: 0 turns it off (None), else as ``parse_time_limit``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    return check_optional_seconds(value, name)

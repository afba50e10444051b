"""The solver options every entry point takes (--time-limit, --workers, --seed; ``enable()``),
checked in one place: a bad value is a one-line ``ValueError`` where it enters, never a
failure deep inside OR-Tools or a silent fallback later.

One default for solver workers everywhere: ``DEFAULT_WORKERS``. CP-SAT's search is
interleaved and its time limit deterministic, so a plan depends on the worker count but not
on the machine: with the same default the CLI, ``compare`` and the drop-in give the same
plan for the same loop, also when the time limit binds.
"""

from __future__ import annotations

import math

DEFAULT_WORKERS = 1
MAX_WORKERS = 256  # CP-SAT threads per solve; more is a typo, not a machine
MAX_SEED = 2**31 - 1  # CP-SAT's random_seed is a 32-bit signed integer


def check_time_limit(value: object, name: str = "time_limit") -> float:
    """A time limit in (deterministic) seconds: a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
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

"""Deadlines: the wall-clock time by which a strategy must hand back its plan."""

from __future__ import annotations

from dataclasses import dataclass
from math import inf
from time import perf_counter


class OutOfTime(TimeoutError):
    """Work stopped at its deadline."""


@dataclass(frozen=True)
class Deadline:
    """A point on `time.perf_counter`'s clock; `at` None means none."""

    at: float | None = None

    @staticmethod
    def after(seconds: float | None) -> Deadline:
        """The deadline `seconds` from now (None: no deadline)."""
        return Deadline(None if seconds is None else perf_counter() + seconds)

    def left(self) -> float:
        """Seconds until the deadline (negative once past; inf without one)."""
        return inf if self.at is None else self.at - perf_counter()

    def share(self, fraction: float) -> Deadline:
        """The deadline `fraction` of the time left from now."""
        return self if self.at is None else Deadline.after(fraction * max(0.0, self.left()))

    def check(self, what: str) -> None:
        """Raise OutOfTime naming `what` once the deadline has passed."""
        if self.at is not None and perf_counter() > self.at:
            raise OutOfTime(what)


NO_DEADLINE = Deadline()

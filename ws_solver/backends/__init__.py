"""Where independent tasks run: a local process pool, or a Ray cluster.

One small interface for the commands that fan work out (`compare`, `explore`, the plan
sweep): `Backend.map(fn, items, ...)` runs `fn(item)` for every item, calls `progress` as
each one finishes, retries a task whose worker died or that raised (at most `retries` more
times), and returns one `TaskResult` per item, in the items' order. A task that keeps failing
comes back as `ok=False` with its last reason; the others are kept. The caller never knows
which backend ran it, so the results are the same on both.

    with open_backend("local", jobs=2) as backend:
        results = backend.map(solve, tasks, progress=bar)
"""

from __future__ import annotations

from .base import (
    BACKENDS,
    RAY_EXTRA,
    Backend,
    BackendError,
    RunStats,
    TaskResult,
    open_backend,
    stats_line,
)

__all__ = [
    "BACKENDS",
    "RAY_EXTRA",
    "Backend",
    "BackendError",
    "RunStats",
    "TaskResult",
    "open_backend",
    "stats_line",
]

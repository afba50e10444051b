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

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from .base import RAY_EXTRA, Backend, BackendError, RunStats, TaskResult, stats_line

BACKENDS = ("local", "ray")


@contextlib.contextmanager
def open_backend(
    name: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    ship: Iterable[Any] = (),
) -> Iterator[Backend]:
    """The backend called `name` ("local" or "ray"), closed on the way out (aborted, its
    workers stopped without waiting, when the body raises or is interrupted).

    local: `jobs` processes (1: in this process). ray: the cluster at `address` (or
    $RAY_ADDRESS), else a private local one with `jobs` CPUs (default: all of them); at most
    `jobs` tasks in flight when given; `ship`: modules whose code the workers must run (sent
    with the job when connecting to a cluster, so that it runs this code, not the nodes')."""
    if name == "local":
        from .local import LocalBackend

        backend: Backend = LocalBackend(jobs or 1)
    elif name == "ray":
        from .ray_backend import RayBackend

        backend = RayBackend(jobs, address, tuple(ship))
    else:
        raise BackendError(f"unknown backend {name!r}; choose from local, ray")
    try:
        yield backend
    except BaseException:
        backend.abort()  # what finished is already kept (the plan cache writes atomically)
        raise
    backend.close()


def check_backend(value: Any, name: str = "backend") -> Backend | str | None:
    """A public function's ``backend`` argument: None (this process), a ``Backend``, or the
    name of one (``BACKENDS``); TypeError or ValueError, one line naming ``name``, else."""
    if value is None or isinstance(value, Backend):
        return value
    if isinstance(value, str):
        if value not in BACKENDS:
            raise ValueError(f"{name} {value[:40]!r} is unknown; choose from {', '.join(BACKENDS)}")
        return value
    raise TypeError(
        f"{name} must be None, a backend name ({', '.join(BACKENDS)}) or a "
        f"ws_solver.backends.Backend, not {type(value).__name__}"
    )


__all__ = [
    "check_backend",
    "BACKENDS",
    "RAY_EXTRA",
    "Backend",
    "BackendError",
    "RunStats",
    "TaskResult",
    "open_backend",
    "stats_line",
]

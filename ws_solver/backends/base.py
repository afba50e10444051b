"""The backend interface and the one driver loop both backends share: a bounded window of
tasks in flight, bounded retries, results in the items' order, a progress callback."""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..core.interrupts import deferred_interrupts
from ..core.wording import count

RAY_EXTRA = "pip install 'ws-solver[ray]'"
INTERRUPT_POLL_S = 0.2  # how soon a Ctrl-C is taken while tasks run elsewhere


class BackendError(Exception):
    """A backend that cannot be used (missing extra, unreachable cluster): one line."""


@dataclass(frozen=True)
class TaskResult:
    """One item's outcome: its value, or why its last attempt failed."""

    index: int
    ok: bool
    value: Any = None
    error: str = ""  # one line, when not ok
    attempts: int = 1
    worker: str = ""  # host:pid of the worker that ran the last successful attempt
    seconds: float = 0.0  # that attempt's wall time, measured in the worker


@dataclass
class RunStats:
    """What ran where: for the `timing` part of a report (never deterministic)."""

    backend: str
    slots: int = 0  # the most tasks in flight at once
    tasks: int = 0
    retries: int = 0
    failed: int = 0
    busy_s: float = 0.0
    wall_s: float = 0.0
    workers: set[str] = field(default_factory=set)

    def record(self, result: TaskResult) -> None:
        self.tasks += 1
        self.failed += not result.ok
        if result.ok:
            self.busy_s += result.seconds
            self.workers.add(result.worker)

    def to_dict(self) -> dict:
        return {
            "backend": self.backend,
            "slots": self.slots,
            "workers": len(self.workers),
            "nodes": len({w.rsplit(":", 1)[0] for w in self.workers}),
            "tasks": self.tasks,
            "retries": self.retries,
            "failed": self.failed,
            "busy_s": round(self.busy_s, 3),
            "wall_s": round(self.wall_s, 3),
        }

    def summary(self) -> str:
        return stats_line(self.to_dict())


def stats_line(d: dict) -> str:
    """`RunStats.to_dict()` in one line: how many workers ran, and for how long."""
    return (
        f"{d['backend']} backend: {count(d['tasks'], 'task')} on {count(d['workers'], 'worker')}, "
        f"{count(d['nodes'], 'node')}, busy {d['busy_s']:.1f} s in {d['wall_s']:.1f} s; "
        f"{d['retries']} retried, {d['failed']} failed after retries"
    )


def run_one(fn: Callable[[Any], Any], item: Any) -> tuple[Any, str, float]:
    """Runs in the worker: `fn(item)`, who ran it and how long it took."""
    start = time.perf_counter()
    value = fn(item)
    return value, f"{socket.gethostname()}:{os.getpid()}", time.perf_counter() - start


def one_line(e: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


class Backend:
    """Subclasses say how one task is submitted and how finished ones are collected;
    `map` does the rest, the same way for every backend."""

    name = "backend"

    def __init__(self) -> None:
        self.stats = RunStats(self.name)

    # -- what a backend provides -------------------------------------------------------------
    def slots(self, cpus: float, gpus: float) -> int:
        """How many tasks of this size may be in flight at once."""
        raise NotImplementedError

    def submit(self, fn: Callable, item: Any, cpus: float, gpus: float) -> Any:
        """Start `run_one(fn, item)`; returns a hashable handle."""
        raise NotImplementedError

    def wait(self, handles: list, timeout: float | None = None) -> list[tuple[Any, bool, Any]]:
        """Block until at least one handle is done (or `timeout` seconds pass: then maybe
        none); (handle, ok, run_one's result or a one-line reason) for each finished one."""
        raise NotImplementedError

    @property
    def runs_elsewhere(self) -> bool:
        """Whether tasks run outside this process: then Ctrl-C is taken between waits
        (`ws_solver.core.interrupts`), and a task running here stays interruptible."""
        return True

    def cancel(self, handles: list) -> None:
        """Stop these tasks (an interrupted run)."""

    def close(self) -> None:
        """Release workers (and a cluster this backend started)."""

    def abort(self) -> None:
        """Release at once, waiting for no task (an interrupted or failed run)."""
        self.close()

    # -- the shared driver -------------------------------------------------------------------
    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: Callable[[TaskResult], None] | None = None,
        retries: int = 2,
        cpus: float = 1,
        gpus: float = 0,
    ) -> list[TaskResult]:
        """`fn(item)` for every item, each retried up to `retries` more times when it raises
        or its worker dies; results in the items' order, `progress` called as each ends.
        `fn` must be importable by name (a module-level function) and items picklable."""
        items = list(items)
        results: list[TaskResult | None] = [None] * len(items)
        tries = [0] * len(items)
        queue = deque(range(len(items)))
        running: dict[Any, int] = {}
        width = max(1, self.slots(cpus, gpus))
        self.stats.slots = max(self.stats.slots, min(width, len(items)))
        start = time.perf_counter()
        poll = INTERRUPT_POLL_S if self.runs_elsewhere else None
        try:
            with deferred_interrupts(self.runs_elsewhere) as interrupts:
                while queue or running:
                    interrupts.check()
                    while queue and len(running) < width:
                        index = queue.popleft()
                        tries[index] += 1
                        running[self.submit(fn, items[index], cpus, gpus)] = index
                    for handle, ok, payload in self.wait(list(running), poll):
                        index = running.pop(handle)
                        if ok:
                            value, worker, seconds = payload
                            result = TaskResult(
                                index, True, value, "", tries[index], worker, seconds
                            )
                        elif tries[index] <= retries:
                            self.stats.retries += 1
                            queue.appendleft(index)
                            continue
                        else:
                            result = TaskResult(index, False, None, payload, tries[index])
                        results[index] = result
                        self.stats.record(result)
                        if progress is not None:
                            progress(result)
        except BaseException:
            self.cancel(list(running))
            raise
        finally:
            self.stats.wall_s += time.perf_counter() - start
        return results  # type: ignore[return-value]

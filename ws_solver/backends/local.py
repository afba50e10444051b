"""The local backend: `jobs` spawned worker processes on this machine, or this process."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from ..core.processes import safe_path_children, watch_parent
from .base import Backend, one_line, run_one


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalBackend(Backend):
    """A process pool of `jobs` workers; `jobs` 1 runs each task in this process.

    A worker that dies breaks the whole pool: the tasks running beside it fail with it and
    are retried (each counts an attempt) in a fresh pool. `jobs` is capped at the usable
    cores (`requested` keeps what was asked). Workers start with the working directory out
    of `sys.path` and end when this process does (`ws_solver.core.processes`)."""

    name = "local"

    def __init__(self, jobs: int = 1) -> None:
        super().__init__()
        self.requested = max(1, jobs)
        self.jobs = min(self.requested, usable_cores())
        self.pool: ProcessPoolExecutor | None = None
        self.owner: dict[Future, ProcessPoolExecutor] = {}  # which pool runs each task
        self.inline: dict[int, tuple[bool, Any]] = {}
        self.tokens = itertools.count()

    def slots(self, cpus: float, gpus: float) -> int:
        return 1 if gpus else self.jobs

    def submit(self, fn, item, cpus: float, gpus: float):
        if self.jobs == 1:
            token = next(self.tokens)
            try:
                self.inline[token] = (True, run_one(fn, item))
            except Exception as e:
                self.inline[token] = (False, one_line(e))
            return token
        with safe_path_children():  # the pool starts its workers in submit
            if self.pool is None:
                # "spawn": fresh interpreters, no state shared with this process (threads,
                # OR-Tools).
                self.pool = ProcessPoolExecutor(
                    max_workers=self.jobs,
                    mp_context=get_context("spawn"),
                    initializer=watch_parent,
                    initargs=(os.getpid(),),
                )
            future = self.pool.submit(run_one, fn, item)
        self.owner[future] = self.pool
        return future

    @property
    def runs_elsewhere(self) -> bool:
        return self.jobs > 1

    def wait(self, handles: list, timeout: float | None = None) -> list[tuple[Any, bool, Any]]:
        if self.jobs == 1:
            return [(h, *self.inline.pop(h)) for h in handles]
        done, _ = wait_futures(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        for future in done:
            out.append((future, *self._outcome(future)))
        return out

    def _outcome(self, future: Future) -> tuple[bool, Any]:
        pool = self.owner.pop(future, None)
        try:
            return True, future.result()
        except BrokenProcessPool as e:
            if pool is not None and pool is self.pool:  # the next submit starts a fresh one
                pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None
            return False, f"worker died ({one_line(e)})"
        except Exception as e:
            return False, one_line(e)

    def cancel(self, handles: list) -> None:
        for handle in handles:
            if isinstance(handle, Future):
                handle.cancel()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def abort(self) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        # Waiting on the pool while an interrupt unwinds can hang (seen under load); the
        # executor offers no public kill, so its worker processes are terminated directly.
        for process in list((pool._processes or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

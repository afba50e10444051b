"""Run a call with a wall-clock limit, in a helper thread, so that a hung partitioner cannot
block a compile forever.

The call runs in a daemon thread; the caller waits at most ``timeout_s``. Past it the caller
gets ``DeadlineExceeded`` and goes on (the drop-in falls back), and the thread is asked to
stop: ``DeadlineExceeded`` is raised inside it at its next Python instruction. A thread stuck
in C code (a solver's own loop) stops when that code returns; CP-SAT's time limit bounds it.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not finish within its limit."""


def call_with_deadline(function: Callable[[], T], timeout_s: float, what: str) -> T:
    """``function()``'s result or exception, or DeadlineExceeded("WHAT did not finish in S s")."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as e:  # handed to the caller, whatever it is
            outcome["error"] = e

    worker = threading.Thread(target=run, name=f"ws_solver: {what}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        _stop(worker)
        raise DeadlineExceeded(f"{what} did not finish in {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _stop(worker: threading.Thread) -> None:
    """Raise DeadlineExceeded in ``worker`` at its next Python instruction (best effort)."""
    ident = worker.ident
    if ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(DeadlineExceeded)
        )

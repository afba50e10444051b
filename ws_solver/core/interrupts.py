"""Ctrl-C taken where the caller chooses, not wherever the main thread happens to be.

Python raises KeyboardInterrupt between any two bytecodes of the main thread, including
between a lock's acquire and the `with` that would release it. Inside
`concurrent.futures.wait` that leaks a future's lock; the process pool's manager thread then
waits on it forever, and the interpreter's exit joins that thread: an interrupted `compare
--jobs 2` printed "interrupted" and hung (one run in three on this 2-core machine, and once in
CI). Within `deferred_interrupts`, SIGINT only sets a flag that the caller checks between
waits; a second Ctrl-C raises at once, as usual."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class Interrupts:
    """Whether a Ctrl-C came in; `check` raises it."""

    def __init__(self) -> None:
        self.pending = False

    def check(self) -> None:
        """Raise the KeyboardInterrupt that came in, if one did."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


@contextlib.contextmanager
def deferred_interrupts(enabled: bool = True) -> Iterator[Interrupts]:
    """SIGINT sets a flag for the block instead of raising (when `enabled`, in the main
    thread, and SIGINT is not ignored); one left unchecked is raised as the block ends
    normally."""
    interrupts = Interrupts()
    previous = signal.getsignal(signal.SIGINT)
    in_main = threading.current_thread() is threading.main_thread()
    if not (enabled and in_main) or previous is signal.SIG_IGN:
        yield interrupts
        return

    def take(signum, frame) -> None:
        if interrupts.pending:  # the second Ctrl-C: the user means it
            raise KeyboardInterrupt
        interrupts.pending = True

    signal.signal(signal.SIGINT, take)
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)
    interrupts.check()

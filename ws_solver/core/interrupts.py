"""Ctrl-C taken where the caller chooses, not wherever the main thread happens to be.

Python raises KeyboardInterrupt between any two bytecodes of the main thread, including
between a lock's acquire and the `with` that would release it. Inside
`concurrent.futures.wait` that leaks a future's lock; the process pool's manager thread then
waits on it forever, and the interpreter's exit joins that thread: an interrupted `compare
--jobs 2` printed "interrupted" and hung (one run in three on this 2-core machine, and once in
CI). Within `deferred_interrupts`, SIGINT only sets a flag that the caller checks between
waits; a second Ctrl-C raises at once, as usual.

`interruptible` is the other half: a long call into native code (CP-SAT's search) that a
Ctrl-C stops, where Python alone would take the Ctrl-C only once the call returned."""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


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


def interruptible(work: Callable[[], T], stop: Callable[[], object]) -> T:
    """`work()`, stopped by `stop()` when a Ctrl-C comes in meanwhile, then the interrupt.

    For calls into native code that hold the GIL released and do not return to Python for a
    long time (CP-SAT's Solve): Python runs a signal handler only when the main thread is back
    in Python, so a Ctrl-C would wait for the call to end. In the main thread (where Python
    runs signal handlers) the call runs in a helper thread, started with SIGINT blocked (it
    and the threads it starts leave SIGINT to the others), while the main thread waits on a
    lock, waking every STOP_POLL_S. When the wait raises (KeyboardInterrupt, or what the
    SIGINT handler raises), `stop()` is called every STOP_POLL_S until `work` has ended (once
    may not be enough: CP-SAT forgets a stop that came before its search began), and the
    interrupt is raised. Elsewhere (another thread) `work` runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    done = _thread.allocate_lock()
    done.acquire()
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as e:  # handed to the main thread
            outcome.append((False, e))
        finally:
            done.release()

    # A raw thread: starting it runs no Python code that a Ctrl-C could interrupt halfway.
    # SIGINT is blocked meanwhile, but another thread of the process may take it and Python
    # then runs the handler here all the same: a KeyboardInterrupt right after the start.
    mask = _block_sigint()
    try:
        _thread.start_new_thread(run, ())
    except RuntimeError:  # no thread: nothing to stop
        _restore(mask)
        raise
    except BaseException:
        _restore(mask)
        _stop_until_done(stop, done, outcome)
        raise
    try:
        _restore(mask)  # a Ctrl-C that came meanwhile is taken here
        # A raw lock: a signal handler that raises while the main thread waits on it leaves
        # nothing half-held (unlike a Condition's, whose lock the helper would then need).
        # The kernel may hand SIGINT to another thread of the process (one the caller
        # started, with SIGINT not blocked), which leaves this wait asleep: it wakes every
        # STOP_POLL_S so that Python runs the handler anyway.
        while not done.acquire(timeout=STOP_POLL_S):
            pass
    except BaseException:
        _stop_until_done(stop, done, outcome)
        raise
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


STOP_POLL_S = 0.05


def _stop_until_done(stop: Callable[[], object], done, outcome: list) -> None:
    """`stop()` until the work has ended. `outcome` is filled before `done` is released: a
    Ctrl-C taken just after the wait succeeded must not wait for a release that came."""
    stop()
    while not outcome and not done.acquire(timeout=STOP_POLL_S):
        stop()


def _block_sigint():
    """Block SIGINT in this thread (threads started meanwhile inherit it); the old mask."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _restore(mask) -> None:
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

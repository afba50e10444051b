"""Ctrl-C taken between waits (`ws_solver.core.interrupts`): a flag first, raised on check;
a second Ctrl-C at once; the handler put back after."""

from __future__ import annotations

import os
import signal

import pytest

from ws_solver.backends.base import Backend
from ws_solver.core.interrupts import deferred_interrupts

# Each test sends a real SIGINT: Python's handler, whatever the run inherited.
pytestmark = pytest.mark.usefixtures("sigint_handled")


def ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # the handler runs before kill returns to Python


def test_a_ctrl_c_waits_for_the_check() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), deferred_interrupts() as interrupts:
        ctrl_c()
        assert interrupts.pending  # taken, not raised
        interrupts.check()
        pytest.fail("check did not raise")
    assert signal.getsignal(signal.SIGINT) is before


def test_one_left_unchecked_is_raised_as_the_block_ends() -> None:
    reached = False
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        ctrl_c()
        reached = True
    assert reached


def test_a_second_ctrl_c_raises_at_once() -> None:
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        ctrl_c()
        ctrl_c()
        pytest.fail("the second Ctrl-C did not raise")


def test_disabled_it_changes_nothing() -> None:
    before = signal.getsignal(signal.SIGINT)
    with deferred_interrupts(enabled=False) as interrupts:
        assert signal.getsignal(signal.SIGINT) is before
        interrupts.check()  # nothing came in


def test_a_quiet_block_raises_nothing() -> None:
    with deferred_interrupts() as interrupts:
        interrupts.check()
    assert not interrupts.pending


class CtrlCInWait(Backend):
    """Tasks "elsewhere" that finish on the first wait, during which Ctrl-C comes in."""

    name = "fake"

    def __init__(self) -> None:
        super().__init__()
        self.waits_finished, self.cancelled = 0, None

    def slots(self, cpus: float, gpus: float) -> int:
        return 2

    def submit(self, fn, item, cpus, gpus):
        return item

    def wait(self, handles, timeout=None):
        assert timeout is not None  # polls, so that a Ctrl-C is seen soon
        ctrl_c()  # inside the wait, where a raise could leak a lock
        self.waits_finished += 1
        return [(h, True, (h, "here", 0.0)) for h in handles[:1]]

    def cancel(self, handles):
        self.cancelled = handles


def test_the_driver_takes_ctrl_c_between_waits() -> None:
    backend, seen = CtrlCInWait(), []
    with pytest.raises(KeyboardInterrupt):
        backend.map(abs, [1, 2, 3], progress=seen.append)
    assert backend.waits_finished == 1  # the wait ran to its end
    assert [r.value for r in seen] == [1]  # and what it returned was kept
    assert backend.cancelled == [2]  # the task still running is cancelled

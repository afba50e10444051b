"""`launcher.batch_timer` on a fake CUDA clock: the timed batch holds only its own launches,
and a warm-up runs the same call right before it, untimed."""

import sys
import types

import pytest

from ws_solver.triton.autotuning.launcher import BATCH_MIN, batch_timer


class FakeGPU:
    """A stream whose kernel takes `ms(n)` for its n-th launch (a GPU heating up)."""

    def __init__(self, ms):
        self.ms, self.clock, self.launches = ms, 0.0, 0

    def call(self):
        self.clock += self.ms(self.launches)
        self.launches += 1

    def torch(self):
        gpu = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = gpu.clock

            def elapsed_time(self, end):
                return end.at - self.at

        cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None)
        return types.SimpleNamespace(cuda=cuda)


@pytest.fixture
def gpu(monkeypatch):
    def make(ms):
        fake = FakeGPU(ms)
        monkeypatch.setitem(sys.modules, "torch", fake.torch())
        return fake

    return make


def test_the_batch_fills_its_target_after_one_untimed_launch(gpu):
    fake = gpu(lambda n: 2.0)
    assert batch_timer(20.0)(fake.call) == pytest.approx(2.0)
    assert fake.launches == 2 + 10  # untimed, the one that sizes the batch, the batch


def test_a_short_kernel_still_gets_the_minimum_batch(gpu):
    fake = gpu(lambda n: 50.0)
    batch_timer(20.0)(fake.call)
    assert fake.launches == 2 + BATCH_MIN


def test_the_warm_up_runs_before_the_batch_and_is_not_timed(gpu):
    # 1 ms for the first 12 launches, 1.25 ms after: the GPU slowed by its power state.
    fake = gpu(lambda n: 1.0 if n < 12 else 1.25)
    assert batch_timer(5.0)(fake.call) == pytest.approx(1.0)  # reads the cool state
    fake = gpu(lambda n: 1.0 if n < 12 else 1.25)
    assert batch_timer(5.0, warm_ms=10.0)(fake.call) == pytest.approx(1.25)
    assert fake.launches == 2 + 10 + 5

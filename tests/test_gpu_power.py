"""benchmarks/gpu/gpu_power.py: parsing nvidia-smi samples and summarizing a sustained window."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.gpu import gpu_power

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_a_sample_line_is_parsed():
    s = gpu_power.parse_sample("1755, 699.12, 61, Active, Not Active, Not Active\n", 3.0)
    assert s == gpu_power.Sample(3.0, 1755.0, 699.12, 61.0, True, False)


def test_a_thermal_slowdown_counts_as_slowdown():
    s = gpu_power.parse_sample("1500, 600, 80, Not Active, Not Active, Active", 0.0)
    assert s is not None and not s.power_capped and s.slowdown


@pytest.mark.parametrize("line", ["", "clocks.sm, power.draw", "1755, [N/A], 61, a, b, c"])
def test_lines_that_are_not_samples_are_skipped(line):
    assert gpu_power.parse_sample(line, 0.0) is None


def test_summary_of_a_window():
    samples = [
        gpu_power.Sample(0.1, 1800, 700, 60, True, False),
        gpu_power.Sample(0.2, 1700, 690, 62, False, False),
    ]
    row = gpu_power.summarize(samples, launches=100, seconds=1.0, work=2e12)
    assert row["ms"] == pytest.approx(10.0)
    assert row["rate"] == pytest.approx(200.0)  # 2e12 / 10 ms / 1e9
    assert row["sm_mhz"] == 1750
    assert row["power_capped"] == 0.5
    assert row["joules_per_launch"] == pytest.approx(6.95)
    assert row["temp_c"] == 62
    assert "1750 MHz" in gpu_power.describe(row)


def test_summary_without_samples_keeps_the_timing():
    row = gpu_power.summarize([], launches=4, seconds=2.0, work=1e9)
    assert row["samples"] == 0 and "sm_mhz" not in row
    assert gpu_power.describe(row).split()[1] == "500.000"


def test_sustain_runs_until_the_time_is_up():
    calls = []
    n, elapsed, start, end = gpu_power.sustain(lambda: calls.append(1), 0.01, lambda: None, 5)
    assert n == len(calls) and n % 5 == 0 and elapsed >= 0.01 and end - start == elapsed


def test_interleaved_rounds_visit_every_run_in_order(monkeypatch):
    """Rounds alternate the runs; each window is entered through its scope and reported."""
    monkeypatch.setattr(gpu_power.Sampler, "running", _no_sampler)
    order, scopes, reported = [], [], []

    def scope(name):
        scopes.append(name)
        return gpu_power.contextlib.nullcontext()

    runs = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    out = gpu_power.interleaved(
        runs, 0.0, 2, 1e9, lambda: None, scope, lambda name, row: reported.append(name)
    )
    # each round starts one run later: no run always follows the same one
    assert scopes == reported == ["a", "b", "b", "a"]
    assert [len(out[k]) for k in "ab"] == [2, 2]
    assert order == ["a"] * 20 + ["b"] * 40 + ["a"] * 20  # one batch each


@gpu_power.contextlib.contextmanager
def _no_sampler(self):
    yield self


def test_without_nvidia_smi_the_sampler_says_so(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match="nvidia-smi not found"), gpu_power.Sampler().running():
        pass

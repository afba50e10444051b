"""Sustained-load timing with the GPU's clock, power and throttle state sampled alongside.

A short benchmark (``do_bench``: ~100 ms per timing) mostly sees a GPU that has not yet
reached its power limit. A kernel that runs for minutes sees the clock that limit leaves.
``sustain`` launches one function back to back for a given time while ``nvidia-smi``
samples the GPU every 100 ms, and reports the rate together with the median SM clock, the
power drawn, the share of samples in which the driver capped the clock for power, and the
energy per launch. Comparing two kernels at the same power, the faster is the one that
spends fewer joules per launch.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

from ws_solver.triton.autotuning.tuning import round_orders

QUERY = (
    "clocks.sm",
    "power.draw",
    "temperature.gpu",
    "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
)


@dataclass(frozen=True)
class Sample:
    """One nvidia-smi reading, stamped with time.monotonic() on arrival."""

    t: float
    sm_mhz: float
    power_w: float
    temp_c: float
    power_capped: bool
    slowdown: bool


def parse_sample(line: str, t: float) -> Sample | None:
    """A CSV line of QUERY (noheader, nounits) -> Sample; None for a line that is not one."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != len(QUERY):
        return None
    try:
        sm, power, temp = (float(x) for x in fields[:3])
    except ValueError:
        return None
    active = [f.lower() == "active" for f in fields[3:]]
    return Sample(t, sm, power, temp, active[0], active[1] or active[2])


class Sampler:
    """Reads nvidia-smi's samples in a thread while the block runs."""

    def __init__(self, period_ms: int = 100) -> None:
        self.period_ms = period_ms
        self.samples: list[Sample] = []

    @contextlib.contextmanager
    def running(self) -> Iterator[Sampler]:
        cmd = [
            "nvidia-smi",
            f"--query-gpu={','.join(QUERY)}",
            "--format=csv,noheader,nounits",
            f"-lms={self.period_ms}",
        ]
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        except FileNotFoundError:
            why = "nvidia-smi not found: the sustained timing samples the GPU with it"
            raise RuntimeError(why) from None
        reader = threading.Thread(target=self._read, args=(proc,), daemon=True)
        reader.start()
        try:
            yield self
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            reader.join(timeout=10)

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            sample = parse_sample(line, time.monotonic())
            if sample is not None:
                self.samples.append(sample)

    def between(self, start: float, end: float) -> list[Sample]:
        return [s for s in self.samples if start <= s.t <= end]


def summarize(samples: list[Sample], launches: int, seconds: float, work: float) -> dict:
    """Rate, clock and energy of one sustained window; `work` is per launch (e.g. FLOP)."""
    ms = 1e3 * seconds / launches
    out: dict = {"launches": launches, "ms": ms, "rate": work / ms / 1e9, "samples": len(samples)}
    if samples:
        power = statistics.mean(s.power_w for s in samples)
        out |= {
            "sm_mhz": statistics.median(s.sm_mhz for s in samples),
            "power_w": power,
            "temp_c": max(s.temp_c for s in samples),
            "power_capped": sum(s.power_capped for s in samples) / len(samples),
            "slowdown": sum(s.slowdown for s in samples) / len(samples),
            "joules_per_launch": power * seconds / launches,
        }
        out["rate_per_ghz"] = out["rate"] / (out["sm_mhz"] / 1e3) if out["sm_mhz"] else None
    return out


def sustain(
    fn: Callable[[], object], seconds: float, sync: Callable[[], None], batch: int = 20
) -> tuple[int, float, float, float]:
    """Launch `fn` back to back for about `seconds` (checking the time every `batch`
    launches). Returns (launches, elapsed seconds, start, end) in time.monotonic() terms."""
    sync()
    start = time.monotonic()
    launches = 0
    while True:
        for _ in range(batch):
            fn()
        launches += batch
        sync()
        now = time.monotonic()
        if now - start >= seconds:
            return launches, now - start, start, now


def describe(row: dict) -> str:
    """One line for a summarize() row."""
    text = f"{row['rate']:7.1f}  {row['ms']:.3f} ms"
    if row.get("samples"):
        text += (
            f"  SM {row['sm_mhz']:.0f} MHz  {row['power_w']:.0f} W  "
            f"power-capped {100 * row['power_capped']:.0f}%  {row['joules_per_launch']:.3f} J"
        )
    return text


def interleaved(
    runs: dict[str, Callable[[], object]],
    seconds: float,
    rounds: int,
    work: float,
    sync: Callable[[], None],
    scope: Callable[[str], AbstractContextManager] = lambda name: contextlib.nullcontext(),
    report: Callable[[str, dict], None] | None = None,
) -> dict[str, list[dict]]:
    """Each run back to back for `seconds`, in `rounds` interleaved rounds, with the GPU
    sampled throughout: name -> one summarize() row per round. `scope(name)` is entered
    around a run's window (e.g. to bind its kernel); `report` sees each row as it comes.
    Each round starts one run later (``tuning.round_orders``): no run always follows the
    same one."""
    out: dict[str, list[dict]] = {name: [] for name in runs}
    with Sampler().running() as sampler:
        for order in round_orders(list(runs), rounds):
            for name in order:
                fn = runs[name]
                with scope(name):
                    n, elapsed, start, end = sustain(fn, seconds, sync)
                row = summarize(sampler.between(start, end), n, elapsed, work)
                out[name].append(row)
                if report is not None:
                    report(name, row)
    return out

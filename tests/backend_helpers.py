"""For the backend tests: faults (a task that kills its own worker once, or always raises),
the arguments of a small `compare`, and its JSON outside the timing section.

The faults wrap the real task function, so what a retried task computes is the real thing.
The worker is killed with SIGKILL, as the kernel's OOM killer or a lost node would end it:
no Python cleanup runs in it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ws_solver.pipeline.comparing import collect_files, compare_on
from ws_solver.pipeline.comparison import deterministic_part
from ws_solver.pipeline.partition import SolveOptions
from ws_solver.report import compare as cmp
from ws_solver.triton.toolchain.versions import planning_version

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
# Three small files, four loops (two in the attention file); each solves in about a second.
SMALL = (
    "attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir",
    "gemm_tma.t128x128x64_w4_s4.sm90.ttgir",
    "row_reduce.r4_n1024_w4_s3.sm90.ttgir",
)


def compare_in(backend: Any, folder: Path, jobs: int | None = None, retries: int = 2):
    """`ws-solver compare FOLDER` on `backend`, as the command runs it (the installed
    Triton's lowering rules): 0.5 s per loop, one worker, no plan cache."""
    options = SolveOptions(time_limit=0.5, workers=1, seed=0, cache=False, wall_clock=False)
    files, failures = collect_files([folder])
    triton = planning_version()
    return compare_on(backend, files, options, triton, None, failures, jobs=jobs, retries=retries)


def deterministic_json(document: dict) -> str:
    """compare --json's bytes outside the timing section."""
    return cmp.to_json(deterministic_part(document))


def ws_solver_process(*args: str, cache: Path | None = None) -> subprocess.Popen:
    """`ws-solver ARGS` running, with stdout and stderr piped (and `cache` as the plan
    cache folder)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if cache is not None:
        env["WS_SOLVER_CACHE_DIR"] = str(cache)
    return subprocess.Popen(
        [sys.executable, "-m", "ws_solver", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def interrupt_after_first_loop(process: subprocess.Popen) -> str:
    """SIGINT once the first loop is reported done; the run's stderr from then on."""
    while not (line := process.stderr.readline()).startswith("[1/"):
        assert line, "the run ended before its first loop"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    return err


def cache_hits_of_a_rerun(argv: list[str], cache: Path, out: Path) -> int:
    """Run `ws-solver ARGV --cache --json OUT` to the end; its plan-cache hits."""
    process = ws_solver_process(*argv, "--cache", "--json", str(out), cache=cache)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out.read_text())["timing"]["plan_cache_hits"]


def victim_of(item: Any) -> str:
    """What names a task: a compare or explore task's file or loop, or the item itself."""
    for attribute in ("file", "graph"):
        value = getattr(item, attribute, None)
        if value is not None:
            return str(getattr(value, "kernel", value))
    return repr(item)


@dataclass(frozen=True)
class KillOnce:
    """Runs `fn`, except that the first task whose name contains `victim` kills its worker
    (SIGKILL), leaving `marker` behind so that the retry runs normally."""

    fn: Any
    victim: str
    marker: str

    def __call__(self, item: Any) -> Any:
        if self.victim in victim_of(item) and not Path(self.marker).exists():
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.fn(item)


@dataclass(frozen=True)
class AlwaysFails:
    """Runs `fn`, except for tasks whose name contains `victim`: those raise, every time."""

    fn: Any
    victim: str

    def __call__(self, item: Any) -> Any:
        if self.victim in victim_of(item):
            raise OSError(f"injected fault in {victim_of(item)}")
        return self.fn(item)


class Wrapped:
    """A backend whose every task function goes through `wrap(fn)` (the faults above)."""

    def __init__(self, backend: Any, wrap: Any) -> None:
        self.backend, self.wrap = backend, wrap
        self.name = backend.name

    @property
    def stats(self) -> Any:
        return self.backend.stats

    def map(self, fn: Any, items: Any, **kwargs: Any) -> Any:
        return self.backend.map(self.wrap(fn), items, **kwargs)


def square(x: int) -> int:
    return x * x

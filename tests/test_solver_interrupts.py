"""Ctrl-C stops CP-SAT's search at once (issue 50, row 7): in a single process, where the
search holds the main thread in native code (`core.interrupts.interruptible`), and in the
workers of `--jobs 2`; the interrupted search keeps nothing in the plan cache.

The commands run as users run them, with a `sitecustomize` of the test on their path (and so
in their pool workers) that says on stderr when a CP-SAT search starts: the test presses
Ctrl-C while one runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ws_solver.core.interrupts import interruptible

REPO = Path(__file__).resolve().parent.parent
SCALE = REPO / "tests" / "data" / "scale"
# Its second search (the tie-break at the least II) runs about 50 s at --time-limit 60.
LONG_SEARCH = SCALE / "attn_fwd.u4.sm100.ttgir"
PROMPT_S = 3.0  # Ctrl-C to exit (the target is 2 s; the margin is for a loaded machine)
# The commands get SIGINT handled, whatever this run inherited (conftest.sigint_handled).
pytestmark = pytest.mark.usefixtures("sigint_handled")

HOOK = """
import os, sys
from ortools.sat.python import cp_model

_solve = cp_model.CpSolver.solve


def solve(self, *args, **kwargs):
    print(f"searching {os.getpid()}", file=sys.stderr, flush=True)
    return _solve(self, *args, **kwargs)


cp_model.CpSolver.solve = solve
"""


def start(tmp_path: Path, *args: str | Path) -> subprocess.Popen:
    """`ws-solver ARGS` in a session of its own (as a terminal's foreground job), announcing
    each CP-SAT search on stderr; the plan cache in tmp_path/cache."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(hook), str(REPO)])
    env["WS_SOLVER_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("WS_SOLVER_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "ws_solver", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def wait_for_searches(process: subprocess.Popen, count: int, distinct: bool = False) -> None:
    """Read stderr until the `count`-th search started (in `count` processes: `distinct`)."""
    seen: list[str] = []
    for line in process.stderr:
        if line.startswith("searching "):
            seen.append(line.split()[1])
            if len(set(seen) if distinct else seen) >= count:
                return
    pytest.fail(f"the command ended before {count} searches: {process.wait()}")


def ctrl_c(process: subprocess.Popen, group: bool) -> tuple[int, float, str]:
    """SIGINT to the process (or its whole group, as a terminal sends it); its exit status,
    the seconds it took to exit and the rest of its stderr."""
    sent = time.perf_counter()
    if group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        os.kill(process.pid, signal.SIGINT)
    try:
        rest = process.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("still running 60 s after Ctrl-C")
    return process.returncode, time.perf_counter() - sent, rest


def left_in(group: int) -> list[str]:
    """The live processes of process group `group` (zombies are gone already)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pgid=,stat=,args="], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in out.stdout.splitlines()]
    return [r[2] for r in rows if len(r) == 3 and r[0] == str(group) and not r[1].startswith("Z")]


def cached_plans(tmp_path: Path) -> list[Path]:
    """The plan records (and their temporary files) in the plan cache; not its key."""
    cache = tmp_path / "cache"
    return [p for p in cache.rglob("*.json*")] if cache.exists() else []


@pytest.mark.slow
def test_ctrl_c_stops_a_single_process_search(tmp_path: Path) -> None:
    # Triton 3.6.0's lowering rules: under 3.9's the loop's second search ends in seconds.
    process = start(
        tmp_path,
        "partition",
        LONG_SEARCH,
        "--time-limit",
        "60",
        "--triton-version",
        "3.6.0",
        "-q",
        "-o",
        tmp_path / "o",
    )
    wait_for_searches(process, 2)  # the long one
    time.sleep(0.5)
    status, seconds, stderr = ctrl_c(process, group=False)
    assert status == 130, stderr
    assert stderr.strip().endswith("ws-solver: interrupted"), stderr
    assert seconds < PROMPT_S, f"exit {seconds:.1f} s after Ctrl-C"
    assert not (tmp_path / "o").exists()
    assert cached_plans(tmp_path) == []  # the cut-short search is no result


@pytest.mark.slow
@pytest.mark.triton
def test_ctrl_c_stops_the_search_of_a_3000_op_loop(tmp_path: Path) -> None:
    from benchmarks.cpu import bench_scale

    # The scale benchmark's largest loop that fits sm_90: 107 unrolled steps, about 3,000 ops.
    instance = bench_scale.Instance(bench_scale.SMALL_TILE, 107, "sm90")
    (loop,) = bench_scale.generate([instance], tmp_path)
    process = start(tmp_path, "partition", loop, "--time-limit", "60", "-q", "-o", tmp_path / "o")
    wait_for_searches(process, 2)  # the second phase: no solution callback in it
    time.sleep(0.5)
    status, seconds, stderr = ctrl_c(process, group=False)
    assert status == 130, stderr
    assert seconds < PROMPT_S, f"exit {seconds:.1f} s after Ctrl-C"
    assert cached_plans(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("group", [True, False], ids=["terminal", "driver-only"])
def test_ctrl_c_stops_the_searches_of_jobs_2(tmp_path: Path, group: bool) -> None:
    folder = tmp_path / "loops"
    folder.mkdir()
    for name in (LONG_SEARCH.name, "attention_unrolled_d64.u2.sm100.ttgir"):
        (folder / name).write_bytes((SCALE / name).read_bytes())
    process = start(tmp_path, "compare", folder, "--jobs", "2", "--time-limit", "60", "-q")
    wait_for_searches(process, 2, distinct=True)  # a search in each worker
    time.sleep(0.5)
    status, seconds, stderr = ctrl_c(process, group)
    assert status == 130, stderr
    assert seconds < PROMPT_S, f"exit {seconds:.1f} s after Ctrl-C"
    time.sleep(0.5)
    assert left_in(process.pid) == []  # the workers' searches ended too


# -- interruptible, in this process -------------------------------------------------------------
def test_interruptible_stops_the_work_then_raises(sigint_handled) -> None:
    stopped = threading.Event()

    def work() -> str:
        os.kill(os.getpid(), signal.SIGINT)  # taken by the main thread, which waits
        if not stopped.wait(10):
            return "ran to its end"
        return "stopped"

    with pytest.raises(KeyboardInterrupt):
        interruptible(work, stopped.set)
    assert stopped.is_set()


def test_interruptible_returns_and_raises_what_the_work_does() -> None:
    assert interruptible(lambda: 42, lambda: None) == 42
    with pytest.raises(ZeroDivisionError):
        interruptible(lambda: 1 / 0, lambda: None)


def test_a_ctrl_c_another_thread_took_still_stops_the_work(sigint_handled) -> None:
    """The kernel may hand SIGINT to any thread that does not block it: the waiting main
    thread must still run Python's handler, and soon."""
    ready, release = threading.Event(), threading.Event()

    def bystander() -> None:
        ready.set()
        release.wait(30)

    other = threading.Thread(target=bystander, daemon=True)
    other.start()
    ready.wait()
    stopped = threading.Event()

    def work() -> str:
        signal.pthread_kill(other.ident, signal.SIGINT)
        return "stopped" if stopped.wait(10) else "ran to its end"

    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            interruptible(work, stopped.set)
    finally:
        release.set()
    assert stopped.is_set() and time.perf_counter() - start < 2

"""The lowering guard's probes side by side: each in a child of its own at once, answered by
request id; one probe of a key for several threads; a probe cancelled (its child killed with
what it runs); a probe given up by its caller (Ctrl-C) answered to no one else. The children
are stand-ins (tests/guard_stubs.py). CPU only."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("triton")

from ws_solver.triton.guard import client as lguard

pytestmark = pytest.mark.triton

SLEEP = "guard_stubs:sleep_and_say_when"


def _job(text: str) -> lguard.LoweringJob:
    return lguard.LoweringJob(text, 90, lguard._PlainOptions(num_warps=4), 4, (), False, False)


@pytest.fixture
def guard():
    guard = lguard.LoweringGuard(parallel=2)
    guard.start()
    try:
        yield guard
    finally:
        guard.shutdown()


def _in_threads(*calls):
    """Each call in a thread of its own; their results, in order."""
    results: list = [None] * len(calls)

    def run(i, call):
        results[i] = call()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def _gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether process ``pid`` ended (or is a zombie awaiting its reaper) within the time."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_two_probes_run_at_once(guard) -> None:
    a, b = _in_threads(
        lambda: guard.probe(_job("1.5 a"), 60, function=SLEEP),
        lambda: guard.probe(_job("1.5 b"), 60, function=SLEEP),
    )
    assert a.ok and b.ok, (a, b)
    assert a.facts["text"] == "1.5 a" and b.facts["text"] == "1.5 b"  # each its own answer
    assert a.facts["pid"] != b.facts["pid"]
    # Their children overlapped in time: each started before the other ended.
    assert a.facts["start"] < b.facts["end"] and b.facts["start"] < a.facts["end"]


def test_one_probe_of_a_key_for_two_threads(guard) -> None:
    a, b = _in_threads(
        lambda: guard.probe(_job("1 same"), 60, function=SLEEP),
        lambda: guard.probe(_job("1 same"), 60, function=SLEEP),
    )
    assert a.ok and b.ok and a.facts["pid"] == b.facts["pid"]  # one child built it


def test_a_hang_holds_up_no_other_probe(guard) -> None:
    start = time.monotonic()
    hung, ok = _in_threads(
        lambda: guard.probe(_job("3600"), 3.0, function=SLEEP),
        lambda: guard.probe(_job("0.2 quick"), 60, function=SLEEP),
    )
    assert hung.status == "hang" and hung.reason == "Triton's pipeline did not finish in 3 s"
    assert ok.ok and ok.wall_s < 3.0
    assert time.monotonic() - start < 30


def test_a_cancelled_probe_leaves_no_process(guard, tmp_path) -> None:
    pids = tmp_path / "pids"
    job = _job(str(pids))
    function = "guard_stubs:hang_with_a_tool"
    verdicts: list = []
    thread = threading.Thread(
        target=lambda: verdicts.append(guard.probe(job, 600, tmp_path, function))
    )
    thread.start()
    end = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < end:
        time.sleep(0.05)
    child, tool = (int(p) for p in pids.read_text().split())
    assert guard.cancel(job.key(function))
    thread.join(30)
    assert not thread.is_alive()
    assert [v.status for v in verdicts] == [lguard.CANCELLED]
    assert _gone(child) and _gone(tool)  # the child and what it ran
    assert not list(tmp_path.glob("*.json"))  # kept nowhere
    assert not guard.cancel(job.key(function))  # nothing in flight any more
    assert guard.probe(_job("0 after"), 60, function=SLEEP).ok  # the helper goes on


def test_a_probe_given_up_by_ctrl_c_answers_no_one_else(guard, sigint_handled) -> None:
    main = threading.get_ident()
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        guard.probe(_job("5 interrupted"), 60, function=SLEEP)
    after = guard.probe(_job("0 next"), 60, function=SLEEP)
    assert after.ok and after.facts["text"] == "0 next"


def test_the_helper_ending_takes_its_running_children(guard, tmp_path) -> None:
    pids = tmp_path / "pids"
    function = "guard_stubs:hang_with_a_tool"
    thread = threading.Thread(target=lambda: guard.probe(_job(str(pids)), 600, None, function))
    thread.start()
    end = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < end:
        time.sleep(0.05)
    child, tool = (int(p) for p in pids.read_text().split())
    server = guard._server
    assert server is not None
    server.proc.stdin.close()  # what this process's exit does
    assert server.proc.wait(timeout=30) == 0
    thread.join(60)
    assert _gone(child) and _gone(tool)


def test_a_killed_helper_takes_its_running_children(guard, tmp_path) -> None:
    pids = tmp_path / "pids"
    function = "guard_stubs:hang_with_a_tool"
    verdicts: list = []
    job = _job(str(pids))
    thread = threading.Thread(target=lambda: verdicts.append(guard.probe(job, 600, None, function)))
    thread.start()
    end = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < end:
        time.sleep(0.05)
    child, _ = (int(p) for p in pids.read_text().split())
    server = guard._server
    assert server is not None
    os.kill(server.proc.pid, signal.SIGKILL)
    thread.join(60)
    assert _gone(child)
    assert verdicts and verdicts[0].status == "unavailable"  # the crash is the helper's

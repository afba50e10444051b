"""A process that ends what a driver's private Ray instance left running once the driver is
gone, even by SIGKILL.

Ray fate-shares its GCS server and raylet with the driver that started them, but the
processes the raylet starts (its agents, idle workers) notice their raylet is gone only
after a timeout: killed with SIGKILL, a `compare --backend ray` left two agents running for
about 78 s. `start(pid)` runs this file as a separate process (its own session, so a Ctrl-C
of the terminal does not end it first) that notes, every POLL_S while the driver lives, its
descendants that are Ray's (`ray::` titles, executables under a `ray` folder); when the pipe
from the driver closes (the driver closed it after `ray.shutdown()`, or died), it kills them
and their descendants, and what they start meanwhile, for up to SETTLE_S.

Linux only (it reads /proc); elsewhere `start` returns None. This file imports only the
standard library: it runs by path, without the package.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from pathlib import Path

POLL_S = 0.2
SETTLE_S = 3.0
PROC = Path("/proc")


def start(driver: int):
    """The reaper of `driver`'s Ray processes (a Popen; close its stdin to end it), or None
    where it cannot run."""
    if not (PROC / str(driver)).is_dir():
        return None
    import subprocess

    from ..core.processes import python_command

    code = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
    return subprocess.Popen(
        python_command([__file__, str(driver)], code=code),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(reaper) -> None:
    """Tell the reaper the driver is done (it sweeps once more and exits); wait for it."""
    if reaper is None:
        return
    try:
        reaper.stdin.close()
        reaper.wait(timeout=SETTLE_S + 2)
    except Exception:  # never let the cleanup fail the run
        pass


# -- in the reaper process --------------------------------------------------------------------
def processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, start time), from /proc/PID/stat."""
    table = {}
    for entry in os.listdir(PROC):
        if entry.isdigit():
            try:
                stat = (PROC / entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            table[int(entry)] = (int(fields[1]), fields[19])  # ppid, starttime
    return table


def is_ray(pid: int) -> bool:
    """A process of Ray's: its title is `ray::...` or its executable lies in a `ray` folder."""
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [w.decode(errors="replace") for w in argv[:3] if w]
    return any(w.startswith("ray::") or "/ray/" in w for w in words)


def descendants(roots: set[int], table: dict[int, tuple[int, str]]) -> set[int]:
    """The processes under `roots` (not the roots themselves)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def main(driver: int) -> None:
    me = os.getpid()
    noted: dict[int, str] = {}  # pid -> start time (a reused pid is not the same process)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], POLL_S)
        table = processes()
        for pid in descendants({driver}, table) - {me}:
            if pid not in noted and is_ray(pid):
                noted[pid] = table[pid][1]
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break  # the driver closed the pipe, or died
    deadline = time.monotonic() + SETTLE_S
    while noted and time.monotonic() < deadline:
        table = processes()
        alive = {pid for pid, started in noted.items() if table.get(pid, (0, None))[1] == started}
        for pid in descendants(alive, table) - {me}:
            noted.setdefault(pid, table[pid][1])
            alive.add(pid)
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


if __name__ == "__main__":
    main(int(sys.argv[-1]))  # after the path (run by `start`: python -c CODE PATH PID)

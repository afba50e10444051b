"""Stand-ins for Triton's lowering that the guard's child process runs in tests
(``ws_solver.triton.guard.client.PROBE_FUNCTION = "guard_stubs:<name>"``). Keep imports light:
the child imports this module."""

from __future__ import annotations

import os
import time


def hang_in_pipeline(job, progress) -> None:
    progress("warp_specialize")
    progress("pipeline")
    time.sleep(3600)


def abort_in_warp_specialize(job, progress) -> None:
    progress("warp_specialize")
    os.abort()


def hang_if_annotated(job, progress) -> None:
    """Hang on our plans (annotated loops); lower Triton's own route for real."""
    if "ttg.partition.stages" in job.text:
        hang_in_pipeline(job, progress)
    from ws_solver.triton.guard.server import probe_lowering

    probe_lowering(job, progress)


def sleep_and_say_when(job, progress) -> dict:
    """Sleep the seconds ``job.text`` starts with; say when, in which process, for which text."""
    progress("pipeline")
    start = time.time()
    time.sleep(float(job.text.split()[0]))
    return {"start": start, "end": time.time(), "pid": os.getpid(), "text": job.text}


def hang_with_a_tool(job, progress) -> None:
    """Start a command that outlives a kill of this process alone (a stand-in for ptxas), write
    both pids to the file ``job.text`` names, and hang."""
    import subprocess

    tool = subprocess.Popen(["sleep", "3600"])
    with open(job.text + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {tool.pid}")
    os.replace(job.text + ".tmp", job.text)
    progress("ptxas")
    time.sleep(3600)

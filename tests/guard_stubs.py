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

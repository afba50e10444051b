"""The names of the variables that switch ws_solver on from the environment (read by
``ws_solver.autoload`` at start-up, so nothing here imports more than ``os``)."""

from __future__ import annotations

import os

VARIABLE = "WS_SOLVER"  # the strategy; unset or empty: ws_solver stays off
REPORT = "WS_SOLVER_REPORT"  # the compile log every process appends to
LOG = "WS_SOLVER_LOG"  # 1: a line on stderr per drop-in compile (TRITON_PRINT_AUTOTUNING's kin)


def requested(environ: os._Environ | dict = os.environ) -> bool:
    """Whether the environment asks for ws_solver (``WS_SOLVER`` set and not empty)."""
    return bool(environ.get(VARIABLE))


def without_activation(environ: os._Environ | dict = os.environ) -> dict[str, str]:
    """A copy of ``environ`` that does not switch ws_solver on: for ws_solver's own helper
    processes, which compile as told, not as the environment says."""
    return {k: v for k, v in environ.items() if k != VARIABLE}


def logging(environ: os._Environ | dict = os.environ) -> bool:
    """Whether ``WS_SOLVER_LOG`` asks for a line per compile (1, true, yes, on)."""
    return environ.get(LOG, "").strip().lower() in ("1", "true", "yes", "on")

"""Fixtures the test modules share: the `ws-solver` command, run as users run it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_ws_solver(
    *args: str | Path,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """`python -m ws_solver ARGS` in a subprocess with this repository first on PYTHONPATH,
    WS_SOLVER_DEBUG unset, `env` added and the plan cache in `cache_dir` when given."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join([str(REPO), full.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    full.pop("WS_SOLVER_DEBUG", None)
    if cache_dir is not None:
        full["WS_SOLVER_CACHE_DIR"] = str(cache_dir)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ws_solver", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=full,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def ws_solver():
    """The `ws-solver` command: `ws_solver(*args, cwd=, env=, cache_dir=, timeout=)`."""
    return run_ws_solver


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `triton` are skipped where the triton extra is not installed."""
    if importlib.util.find_spec("triton") is not None:
        return
    skip = pytest.mark.skip(reason="needs the triton extra")
    for item in items:
        if "triton" in item.keywords:
            item.add_marker(skip)

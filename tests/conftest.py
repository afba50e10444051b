"""Fixtures the test modules share: the `ws-solver` command, run as users run it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import CORPUS, SMALL, compare_in

from ws_solver.backends import open_backend

REPO = Path(__file__).resolve().parent.parent

# The tests switch ws_solver on themselves: a $WS_SOLVER of the shell (docs/torch-compile.md)
# must not switch it on for the test processes and the ones they start. Dropped before any test
# module imports Triton, where ws_solver_autoload.pth would read it.
os.environ.pop("WS_SOLVER", None)


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


@pytest.fixture
def sigint_handled():
    """Python's own SIGINT handler (KeyboardInterrupt) for a test that sends SIGINT to itself
    or to a command it starts, put back after: a run in the background (`make test &`,
    `nohup`) inherits SIGINT ignored, which its children would inherit too (an ignored
    signal stays ignored across exec; a handled one is reset to the default)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture(scope="session")
def ws_solver():
    """The `ws-solver` command: `ws_solver(*args, cwd=, env=, cache_dir=, timeout=)`."""
    return run_ws_solver


def _installed_triton() -> str | None:
    if importlib.util.find_spec("triton") is None:
        return None
    from importlib.metadata import version

    return version("triton")


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `triton` are skipped where the triton extra is not installed; tests marked
    `triton36` (3.6.0's text fixtures or behaviour) where another version is."""
    installed = _installed_triton()
    no_triton = pytest.mark.skip(reason="needs the triton extra")
    not_36 = pytest.mark.skip(reason=f"checks a fact of Triton 3.6.0; {installed} is installed")
    for item in items:
        if installed is None and ("triton" in item.keywords or "triton36" in item.keywords):
            item.add_marker(no_triton)
        elif installed is not None and "triton36" in item.keywords and installed != "3.6.0":
            item.add_marker(not_36)


@pytest.fixture(scope="session")
def small(tmp_path_factory) -> Path:
    """A folder with the backend tests' SMALL corpus files (backend_helpers.py)."""
    folder = tmp_path_factory.mktemp("small")
    for name in SMALL:
        shutil.copy(CORPUS / name, folder / name)
    return folder


@pytest.fixture(scope="session")
def reference(small: Path) -> dict:
    """The SMALL corpus compared in this process (the local backend, one job)."""
    with open_backend("local", 1) as backend:
        return compare_in(backend, small).document


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A plan cache of the test's own (empty), with the in-memory layer cleared around it."""
    from ws_solver.pipeline import plancache

    monkeypatch.setenv(plancache.ENV_DIR, str(tmp_path))
    plancache.clear_memory()
    yield tmp_path
    plancache.clear_memory()


@pytest.fixture(autouse=True)
def _builds_one_after_another(monkeypatch):
    """The decision check's speculative builds off unless a test asks for them
    (`builds.spare_core` patched back): whether they start follows the machine's load
    average, and a test's count of plannings or probes must not."""
    if importlib.util.find_spec("triton") is None:
        return
    from ws_solver.triton.dropin import builds

    monkeypatch.setattr(builds, "spare_core", lambda: False)

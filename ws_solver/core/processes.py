"""How ws_solver starts its Python helper processes: with the working directory out of
`sys.path` (a file there, say `select.py`, would otherwise be imported in its place), and
dying with the process that started them (SIGTERM or SIGKILL of the parent leaves nothing
running).

- `python_command`: the command line of a helper (`-P` on Python 3.11+; on 3.10, `-c` with
  the "" that `-c` puts first on `sys.path` dropped before anything is imported).
- `die_with_parent`: for `Popen(preexec_fn=...)`: the kernel kills the child when the thread
  that started it ends (Linux), and a child whose parent is already gone exits.
- `safe_path_children`: children that multiprocessing starts meanwhile (pool workers, its
  resource tracker) get PYTHONSAFEPATH, Python 3.11's `-P`; multiprocessing builds their
  command lines itself.
- `watch_parent`: a pool worker's thread that ends the worker once its parent is gone.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence

SAFE_PATH_FLAG = sys.version_info >= (3, 11)  # -P and PYTHONSAFEPATH
_DROP_FIRST = "import sys; del sys.path[0]; "  # Python 3.10: -c's "" goes first
_PR_SET_PDEATHSIG = 1
_SIGKILL = 9
WATCH_INTERVAL_S = 0.5


def python_command(
    args: Sequence[str] = (), code: str | None = None, module: str | None = None
) -> list[str]:
    """`sys.executable` running `code` (as `-c`) or `module` (as `-m`) with `args`, the
    working directory out of `sys.path`."""
    if (code is None) == (module is None):
        raise ValueError("python_command takes one of code and module")
    if SAFE_PATH_FLAG:
        run = ["-c", code] if code is not None else ["-m", module]
        return [sys.executable, "-P", *run, *args]
    if code is None:
        code = f"import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", _DROP_FIRST + code, *args]


def die_with_parent(parent: int | None = None):
    """A `preexec_fn`: the child gets SIGKILL when its parent's thread ends (Linux's
    PR_SET_PDEATHSIG), and exits at once if `parent` (default: the caller) is gone already.
    Everything is looked up here, in the parent: the child only calls."""
    parent = os.getpid() if parent is None else parent
    prctl = _prctl()

    def preexec() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _prctl():
    """libc's prctl on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def safe_path_children() -> Iterator[None]:
    """PYTHONSAFEPATH=1 in this process's environment while the block runs (what the
    children it starts inherit), restored after."""
    if not SAFE_PATH_FLAG:
        yield
        return
    old = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = old


def watch_parent(parent: int) -> None:
    """In a worker: a daemon thread that ends this process once `parent` is no longer its
    parent (killed, or gone without shutting the pool down)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_INTERVAL_S)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name="ws-solver-parent-watch", daemon=True).start()

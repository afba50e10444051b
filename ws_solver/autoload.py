"""Switching ws_solver on from the environment (``WS_SOLVER=<strategy>``), in every Python
process that compiles Triton kernels, without the program importing ws_solver.

The package installs ``ws_solver_autoload.pth`` into site-packages. Python runs that one line
at start-up: with ``WS_SOLVER`` unset or empty it reads ``os.environ`` (``os`` is already
imported by then) and does nothing else. With it set, it imports this module (and the light
``ws_solver/__init__``) and calls ``install()``, which puts a watcher on ``sys.meta_path``:
nothing else happens until the process imports ``triton``. Right after Triton's package has
run, ``ws_solver.triton.dropin.environ.activate()`` reads the other ``WS_SOLVER_*`` variables and
calls ``enable()`` (docs/torch-compile.md). A process that never imports Triton never loads
more of ws_solver than this module.

Triton 3.6/3.9 offer no start-up hook of their own that fits: ``triton.backends`` entry points
register a compiler backend, ``TRITON_CACHE_MANAGER`` a cache class, and the stages hook
(``knobs.runtime.add_stages_inspection_hook``) has to be installed by someone.

Where ws_solver is not installed (a copy of the repository on ``PYTHONPATH``),
``site_folder(path)`` writes a folder to put first on ``PYTHONPATH``: the same ``.pth`` and a
``sitecustomize.py`` that makes the folder a site folder. Child processes inherit
``PYTHONPATH`` (Inductor's compile workers get the parent's ``sys.path`` as theirs), so they
switch on too.
"""

from __future__ import annotations

import os
import sys

from .core.envvars import VARIABLE, requested

PTH_NAME = "ws_solver_autoload.pth"
TRITON = "triton"

_installed = False
_activated = False


def install() -> None:
    """Switch ws_solver on once Triton is imported (at once if it already is). Idempotent:
    the ``.pth`` may run twice (an installed package and a site folder both on the path)."""
    global _installed
    if _installed or not requested():
        return
    _installed = True
    module = sys.modules.get(TRITON)
    if module is not None and getattr(module, "__spec__", None) is not None:
        _activate()
        return
    sys.meta_path.insert(0, TritonWatcher())


class TritonWatcher:
    """A ``sys.meta_path`` finder that finds nothing itself: for ``triton`` it asks the finders
    after it for the spec and has the loader activate ws_solver once the package has run.
    It leaves ``sys.meta_path`` once Triton is imported (not on a mere look-up such as
    ``importlib.util.find_spec("triton")``, which imports nothing)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if name != TRITON:
            return None
        spec = _spec_from_others(self, name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _ActivatingLoader(spec.loader, self)
        return spec

    def leave(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _spec_from_others(me: object, name: str, path: object, target: object) -> object:
    for finder in list(sys.meta_path):
        if finder is me:
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec
    return None


class _ActivatingLoader:
    """Triton's own loader, plus ``_activate()`` after the package has run; the module keeps
    the original loader."""

    def __init__(self, loader: object, watcher: TritonWatcher) -> None:
        self._loader = loader
        self._watcher = watcher

    def create_module(self, spec: object) -> object:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: object) -> None:
        spec = module.__spec__
        spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._watcher.leave()
        _activate()

    def __getattr__(self, name: str) -> object:
        return getattr(self._loader, name)


def _activate() -> None:
    """``ws_solver.triton.dropin.environ.activate()`` once per process; it reports its own failures
    as one line, and anything that escapes it still must not break ``import triton``."""
    global _activated
    if _activated:
        return
    _activated = True
    try:
        from .triton.dropin.environ import activate

        activate()
    except Exception as e:  # e.g. ws_solver's dependencies missing from this environment
        print(
            f"ws_solver: {VARIABLE} is set but ws_solver could not start "
            f"({type(e).__name__}: {e}); it is off in this process (pid {os.getpid()})",
            file=sys.stderr,
            flush=True,
        )


# -- a site folder for a checkout that is not installed ---------------------------------------
SITECUSTOMIZE = '''\
"""Written by ws_solver.autoload.site_folder: runs the ws_solver .pth of this folder (Python
runs .pth files of site folders only), then the sitecustomize this one hides, if any."""
import os as _os
import site as _site
import sys as _sys

_here = _os.path.dirname(_os.path.abspath(__file__))
_site.addsitedir(_here)


def _next_sitecustomize():
    import importlib.machinery
    import importlib.util

    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_next_sitecustomize()
'''


def pth_source() -> str:
    """The ``.pth`` file shipped with the package: next to the package folder in a checkout,
    an editable install and an installed wheel alike."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PTH_NAME)


def site_folder(path: str | os.PathLike) -> str:
    """Make ``path`` (created if missing) a folder that switches ws_solver on for every
    process with it first on ``PYTHONPATH`` (and ws_solver importable, e.g. the repository
    root on ``PYTHONPATH`` too); returns it. ``WS_SOLVER`` still decides: unset, nothing
    happens."""
    folder = os.fspath(path)
    os.makedirs(folder, exist_ok=True)
    with open(pth_source(), encoding="utf-8") as f:
        line = f.read()
    _write(os.path.join(folder, PTH_NAME), line)
    _write(os.path.join(folder, "sitecustomize.py"), SITECUSTOMIZE)
    return folder


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

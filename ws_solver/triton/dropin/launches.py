"""Launches of warp-specialized kernels, routed while the drop-in is in measured mode.

``enable("measured")`` cannot decide at compile time: its choice is made by timing builds on
the launch's own arguments. While such a session is on, ``JITFunction.run`` (what
``kernel[grid](...)`` calls) is wrapped: a launch of a ``@triton.jit`` kernel whose source asks
for ``warp_specialize`` goes to that kernel's *measurer* (one per kernel, made by
``measurer_factory``, which ``ws_solver.triton`` sets to the autotuning floor's
``measured.measurer``), every other launch runs as before. A measurer launches builds through
``JITFunction.run`` itself; those calls, nested in the routed one, pass straight through.
Compiles that do not come through ``JITFunction.run`` (``triton.compile``, Inductor) build
stock's kernel (``kernel_compile``).
"""

from __future__ import annotations

import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

from .session import Session, lock

# (the JITFunction, the session) -> an object with ``run(*args, grid, warmup, **kwargs)``.
measurer_factory: Callable[[Any, Session], Any] | None = None

_state = threading.local()  # .depth: routed launches on this thread's stack
_original_run: Callable[..., Any] | None = None
_session: Session | None = None
_settings: Any = None  # the settings the measurers were made for
_measurers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Per kernel: whether it (or a jit function it calls) asks for warp specialization.
_asks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def install(session: Session) -> None:
    """Route launches to measurers for ``session`` (idempotent). A build's own drop-in
    session comes and goes inside a routed launch; the measurers stay while the settings do."""
    global _original_run, _session, _settings
    from triton.runtime.jit import JITFunction

    if measurer_factory is None:
        raise RuntimeError("measured mode: no measurer factory (import ws_solver.triton)")
    with lock:
        if _settings != (session.settings, session.cache_base, session.report_file):
            _measurers.clear()
            _settings = (session.settings, session.cache_base, session.report_file)
        _session = session
        if _original_run is None:
            _original_run = JITFunction.run
            JITFunction.run = _routed_run


def uninstall() -> None:
    """Launches run as Triton's own again."""
    global _original_run, _session
    from triton.runtime.jit import JITFunction

    with lock:
        if _original_run is not None:
            JITFunction.run = _original_run
            _original_run = None
        _session = None


def installed() -> bool:
    return _original_run is not None


def asks_for_specialization(jit: Any) -> bool:
    """Whether a kernel's source, or that of a ``@triton.jit`` function it calls (through
    its module's globals, at any depth), has a loop asking for warp specialization: an
    attention kernel's loop is often in a helper. Kept per kernel (launches are hot)."""
    known = _asks.get(jit)
    if known is None:
        known = _asks[jit] = _asks_in(jit, set())
    return known


def _asks_in(jit: Any, seen: set[int]) -> bool:
    if id(jit) in seen:
        return False
    seen.add(id(jit))
    if "warp_specialize" in (getattr(jit, "src", "") or ""):
        return True
    fn = getattr(jit, "fn", None)
    scope = getattr(fn, "__globals__", None) or {}
    for name in getattr(getattr(fn, "__code__", None), "co_names", ()):
        found = scope.get(name)
        callees = [found] if _is_jit(found) else []
        if isinstance(found, types.ModuleType):  # module.helper(...): its jit functions
            callees = [getattr(found, n, None) for n in fn.__code__.co_names]
        if any(_is_jit(c) and _asks_in(c, seen) for c in callees):
            return True
    return False


def _is_jit(obj: Any) -> bool:
    """A ``@triton.jit`` function (or a wrapper of one, e.g. an autotuner): a `src` and a
    Python `fn` behind it."""
    return hasattr(obj, "src") and callable(getattr(obj, "fn", None))


def _routed_run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
    original = _original_run
    session = _session
    depth = getattr(_state, "depth", 0)
    if original is None:  # uninstalled while this call was on its way
        from triton.runtime.jit import JITFunction

        original = JITFunction.run
    if depth or not _measures(session, self):
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)
    with lock:
        measurer = _measurers.get(self)
        if measurer is None:
            assert measurer_factory is not None
            measurer = _measurers[self] = measurer_factory(self, session)
    _state.depth = depth + 1
    try:
        return measurer.run(*args, grid=grid, warmup=warmup, **kwargs)
    finally:
        _state.depth = depth


def _measures(session: Session | None, jit: Any) -> bool:
    """Whether a launch of ``jit`` is measured: a live measured session, a kernel that asks
    for warp specialization and that no ``skip`` pattern names."""
    if session is None or not session.active or not asks_for_specialization(jit):
        return False
    name = getattr(getattr(jit, "fn", None), "__name__", "")
    return session.settings.skipped_by(name) is None

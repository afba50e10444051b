"""The drop-in: compile every warp-specialized Triton kernel through ws_solver's partitioner.

``enable()`` installs a ``triton.knobs.runtime.add_stages_inspection_hook`` whose ``ttgir``
stage, for kernels compiled for sm_90 or newer whose TTIR has a loop tagged
``tt.warp_specialize``, runs make_ttgir up to the partitioner input point, partitions the
text with ``ws_solver.pipeline.partition.partition_text`` (or leaves it to Triton's own partitioner,
strategy "triton"), and runs the rest of make_ttgir on the result. Kernels without such a
loop go through Triton's own stage untouched. See docs/dropin.md.

Failures never break the compile: each attempt starts from a fresh parse of the
partitioner input text, and the strategies are tried in the order optimal → heuristic →
triton → none (starting at the one asked for), then Triton's unmodified stage. One
``WSFallbackWarning`` per kernel says what failed where.
"""

from __future__ import annotations

import contextlib
import gc
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import Any

from ...core.options import (
    DEFAULT_SEED,
    DEFAULT_TIME_LIMIT,
    DEFAULT_WORKERS,
    SolveOptions,
    check_flag,
)
from ...core.strategy import DROPIN_STRATEGIES, Explore, Strategy, parse_strategy
from ..guard import client as lguard
from ..toolchain import versions
from . import launches, reportlog
from .kernel_compile import KernelCompile
from .session import NOTHING, CompileReport, Session, Settings, lock

_session: Session | None = None


def enable(
    strategy: Strategy | str = Strategy.OPTIMAL,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    *,
    cache: bool = True,
    solve: SolveOptions | None = None,
    apply_registers: bool = True,
    overlap_wgmma: bool = True,
    release_per_warp_group: bool = True,
    take_turns: bool = False,
    cache_dir: str | os.PathLike | None = None,
    lowering_timeout: float | None = lguard.DEFAULT_TIMEOUT_S,
    partition_timeout: float | None = None,
    reset_caches: bool = True,
    check_decision: bool = True,
    parallel_builds: bool = True,
    skip: str | Sequence[str] = (),
    report_file: str | os.PathLike | None = None,
    dump_dir: str | os.PathLike | None = None,
    candidates: str | Sequence[str] = (),
    **options: Any,
) -> Settings:
    """Compile warp-specialized kernels through ws_solver until ``disable()``.

    ``strategy``: "optimal" (CP-SAT, warm-started by the heuristic), "heuristic", "triton"
    (Triton's own partitioner through the same pipeline), "none" (no specialization),
    "explore:K" (each loop's K-th best plan under the cost model, as `ws-solver explore`
    lists them; rank 0 is the modeled optimum), "stock" (stock Triton's own kernel, with a
    report) or "measured" (at a kernel's first launch per specialization, ``candidates``, by
    default stock's kernel, optimal's, the unspecialized one and stock's and optimal's with
    one more stage, are checked and timed on the launch's own arguments,
    which come out unchanged, and the fastest that computes the reference's answer is kept,
    on disk too; ``ws_solver.triton.autotuning.measured``).
    ``cache=False`` neither reads nor writes the plan cache. ``apply_registers=False``
    leaves Triton's register requests alone. ``overlap_wgmma=False`` leaves Triton's sm_90
    wgmma waits where its pipeliner put them (see ``ws_solver.triton.rewrites.overlap``).
    ``release_per_warp_group=False`` keeps Triton's partition-wide stage releases; by default
    the two warp groups of an 8-warp sm_90 consumer release each on its own
    (``ws_solver.triton.rewrites.wgrelease``). ``take_turns=True`` then has those two warp groups
    take turns issuing their wgmmas (``ws_solver.triton.rewrites.pingpong``). Binaries go to
    ``<cache_dir or triton.knobs.cache.dir>/ws_solver-<strategy>-<digest>``; other
    keyword ``options`` are SolveOptions fields; ``solve``: a whole ``SolveOptions``, built
    and checked by the caller (``ws-solver tune``), instead of ``time_limit``, ``workers``,
    ``seed``, ``cache`` and those fields. ``lowering_timeout``: seconds Triton's
    lowering of a partitioned module may take in the guard's child process before the
    attempt is abandoned as hung (``None`` or 0: no guard, lower in-process directly).
    ``partition_timeout``: wall seconds one partitioning attempt may take before it counts as
    hung and the next strategy is tried (default: ``Settings.partition_limit()``).
    ``check_decision=False`` skips the decision check (``ws_solver.triton.dropin.decision_check``):
    by default an optimal or heuristic compile builds its kernel (and stock Triton's, where a
    rule weighs it) to ptxas in the guard's child, keeps stock's decision
    on a target never measured unless there is evidence, and keeps the decision that spills
    less when ptxas spills the chosen kernel. ``parallel_builds=False``: its builds one after
    another, never one started before a rule asks for it (by default, where two cores or more
    are free, stock's build runs beside ours on a measured target too and is used only where
    a rule asks for it: ``ws_solver.triton.dropin.builds``).
    ``skip``: kernel-name patterns (``fnmatch``, e.g. ``"_attn_fwd*"``) left to stock Triton:
    their compiles run Triton's own stages and are reported as ``"stock"`` with the pattern.
    ``candidates``: measured mode's candidates, names as ``autotune`` takes them (a list,
    or one string split at commas: ``"stock,optimal,none,heuristic,stock~s+1"``); stock's
    kernel is always one. Default: ``core.candidates.MEASURED_CANDIDATES``.
    ``dump_dir``: a folder each compiled kernel's planner input TTGIR, annotated TTGIR, plans
    and report are written to (``ws_solver.triton.dropin.dump``; what ``ws-solver
    partition``, ``explain`` and ``compare`` take).
    ``report_file``: a file every compile report is appended to, as a JSON line
    (``ws_solver.triton.dropin.reportlog``; ``ws-solver reports FILE`` reads it back).
    ``reset_caches=False`` leaves in-memory kernels and autotuning choices alone (for a caller
    that keeps each strategy's kernels apart itself, as ``ws_solver.triton.autotune`` does).
    Every option is checked here, before anything changes: a bad value raises ``ValueError``
    (an unknown one, or a ``cache_dir`` that is no path, ``TypeError``) naming it, and the
    previous state (enabled or not) stays in force. A
    Triton version the drop-in does not support raises
    ``versions.UnsupportedTritonVersion`` naming the supported ones.
    """
    versions.installed()
    strategy = parse_strategy(strategy, DROPIN_STRATEGIES)
    check_flag(reset_caches, "reset_caches")
    loose = {"time_limit": time_limit, "workers": workers, "seed": seed, "cache": cache, **options}
    solve = solve_options(solve, loose)
    cache_base = check_cache_dir(cache_dir)
    log = reportlog.check_path(report_file, "report_file")
    dump = check_dump_dir(dump_dir)
    settings = Settings(
        strategy,
        solve,
        apply_registers=apply_registers,
        overlap_wgmma=overlap_wgmma,
        lowering_timeout=lowering_timeout,
        release_per_warp_group=release_per_warp_group,
        take_turns=take_turns,
        partition_timeout=partition_timeout,
        check_decision=check_decision,
        parallel_builds=parallel_builds,
        skip=skip,
        dump_dir=dump,
        candidates=_candidate_list(candidates),
    )
    with lock:
        if _session is not None:
            _uninstall(reset_caches)
        _install(settings, cache_base, None, reset_caches, log)
    return settings


def _candidate_list(candidates: Any) -> tuple[str, ...]:
    """``candidates`` as a tuple of specs (``Settings`` checks each)."""
    if isinstance(candidates, str):
        return tuple(p.strip() for p in candidates.split(",") if p.strip())
    if not isinstance(candidates, (list, tuple)) or not all(isinstance(c, str) for c in candidates):
        raise TypeError("enable(): candidates must be a string or a list of strings")
    return tuple(candidates)


def solve_options(solve: SolveOptions | None, loose: dict[str, Any]) -> SolveOptions:
    """``enable()``'s SolveOptions: ``solve`` whole, else built from its loose keywords (one
    of the two: TypeError when both are given, or a keyword is no SolveOptions field)."""
    unknown = sorted(set(loose) - {f.name for f in fields(SolveOptions)})
    if unknown:
        raise TypeError(f"enable() got unknown options: {', '.join(unknown)}")
    if solve is None:
        return SolveOptions(**loose)
    if not isinstance(solve, SolveOptions):
        raise TypeError(f"enable(): solve must be SolveOptions, not {type(solve).__name__}")
    defaults = SolveOptions()
    given = sorted(k for k, v in loose.items() if v != getattr(defaults, k))
    if given:
        raise TypeError(f"enable(): give solve= or {', '.join(given)}, not both")
    return solve


def check_cache_dir(cache_dir: Any) -> str | None:
    """``cache_dir`` checked before anything changes (``check_folder``)."""
    return check_folder(cache_dir, "cache_dir")


def check_dump_dir(dump_dir: Any) -> str | None:
    """``dump_dir`` checked before anything changes (``check_folder``)."""
    return check_folder(dump_dir, "dump_dir")


def check_folder(value: Any, name: str) -> str | None:
    """A folder option checked before anything changes: a path (str or os.PathLike) to a
    folder this process can write in, or make in the nearest folder that exists, found by
    trying (``os.access`` says yes to root for /proc); else TypeError or ValueError naming
    ``name``. Nothing is left made."""
    if value is None:
        return None
    try:
        path = os.fspath(value)
    except TypeError:
        kind = type(value).__name__
        raise TypeError(
            f"enable(): {name} must be a path (str or os.PathLike), not {kind}"
        ) from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path or "\0" in path:
        raise ValueError(f"enable(): {name} {path!r} is not a path")
    full = os.path.abspath(path)
    existing = full  # the nearest folder that exists: the rest is made in it
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ValueError(f"enable(): {name} {path!r} is not a folder")
    problem = _try_writing(existing)
    if problem:
        where = "" if existing == full else f" in {existing!r}"
        raise ValueError(f"enable(): {name} {path!r} cannot be written{where} ({problem})")
    return path


def _try_writing(existing: str) -> str:
    """Why nothing can be made in the folder ``existing`` ("" when it can), found by making
    an entry of a name of its own there (a temporary folder: the cache folders below it can
    then be made too) and removing it: nothing another process trying at once could meet."""
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".ws_solver-check."))
    except OSError as e:
        return e.strerror or str(e)
    return ""


def disable() -> None:
    """Restore the hook and the cache directory that were there before ``enable()``."""
    with lock:
        if _session is not None:
            _uninstall()


@contextlib.contextmanager
def partitioner(strategy: Strategy | str = Strategy.OPTIMAL, **kwargs: Any) -> Iterator[Settings]:
    """``with partitioner("heuristic"): ...`` — enable for the block, then restore."""
    with lock:
        outer = _session
    settings = enable(strategy, **kwargs)
    reset = kwargs.get("reset_caches", True)
    try:
        yield settings
    finally:
        with lock:
            if _session is not None:
                _uninstall(reset)
            if outer is not None:
                _install(outer.settings, outer.cache_base, outer.reports, reset, outer.report_file)


def is_enabled() -> bool:
    return _session is not None


def current_settings() -> Settings | None:
    session = _session
    return session.settings if session else None


def cache_dir() -> str | None:
    """The Triton cache directory in use while enabled."""
    session = _session
    return session.cache_dir if session else None


def compile_reports() -> list[CompileReport]:
    """Reports of the kernels compiled (not served from Triton's cache) since ``enable()``."""
    session = _session
    with lock:
        return list(session.reports) if session else []


def last_compile_report() -> CompileReport | None:
    reports = compile_reports()
    return reports[-1] if reports else None


def _install(
    settings: Settings,
    cache_base: str | None,
    reports=None,
    reset: bool = True,
    report_file: str | None = None,
) -> None:
    global _session
    from triton import knobs

    prev_knob = knobs.cache.__dict__.get("dir", NOTHING)
    prev_env = os.environ.get("TRITON_CACHE_DIR")
    base = cache_base if cache_base is not None else knobs.cache.dir
    where = os.path.join(base, f"ws_solver-{settings.strategy}-{settings.digest()[:16]}")
    session = Session(
        settings=settings,
        cache_base=cache_base,
        cache_dir=where,
        prev_hook=knobs.runtime.add_stages_inspection_hook,
        prev_knob=prev_knob,
        prev_env=prev_env,
        reports=reports if reports is not None else [],
        report_file=report_file,
    )
    knobs.cache.dir = where
    knobs.runtime.add_stages_inspection_hook = make_hook(session)
    session.prev_listener = knobs.compilation.listener
    knobs.compilation.listener = _cache_hit_listener(session)
    _session = session
    if settings.strategy == Strategy.MEASURED:
        launches.install(session)
    if reset:
        reset_jit_caches()
    _warm_up(settings)


# Strategies whose compiles plan with CP-SAT and build in the guard's helper process.
_SOLVING = (Strategy.OPTIMAL, Strategy.HEURISTIC, Strategy.MEASURED)


def _warm_up(settings: Settings) -> None:
    """Start the guard's helper process now (its Triton import), beside the user's own work,
    instead of at the first compile, which would wait for it. It changes nothing that is
    built; a helper that cannot start is met again, and reported, by the compile. (Importing
    the solver in a thread here as well was slower on a loaded 2-core machine: the thread
    holds the GIL the compile's front-end needs.)"""
    if settings.strategy not in _SOLVING and not isinstance(settings.strategy, Explore):
        return
    if settings.lowering_timeout:
        lguard.guard().start()


def _uninstall(reset: bool = True) -> None:
    global _session
    from triton import knobs

    session = _session
    assert session is not None
    session.active = False
    launches.uninstall()
    hook = knobs.runtime.add_stages_inspection_hook
    if getattr(hook, "ws_solver_session", None) is session:
        knobs.runtime.add_stages_inspection_hook = session.prev_hook
    # else: someone installed a hook after ours; ours now only forwards to its predecessor.
    listener = knobs.compilation.listener
    if getattr(listener, "ws_solver_session", None) is session:
        knobs.compilation.listener = session.prev_listener
    if session.prev_knob is NOTHING:
        knobs.cache.__dict__.pop("dir", None)
    else:
        knobs.cache.__dict__["dir"] = session.prev_knob
    if session.prev_env is None:
        os.environ.pop("TRITON_CACHE_DIR", None)
    else:
        os.environ["TRITON_CACHE_DIR"] = session.prev_env
    _session = None
    if reset:
        reset_jit_caches()


def _cache_hit_listener(session: Session) -> Any:
    """Triton's compilation listener while enabled: a kernel served from Triton's cache (no
    compile ran, so no stage hook) has its report in the binary's metadata; it joins
    ``compile_reports()`` with a note, so ``last_compile_report()`` names the kernel just
    loaded. The listener before ours is called as before."""

    def listener(*, src: Any, metadata: dict, metadata_group: Any, times: Any, cache_hit: bool):
        prev = session.prev_listener
        if prev is not None:
            prev(
                src=src,
                metadata=metadata,
                metadata_group=metadata_group,
                times=times,
                cache_hit=cache_hit,
            )
        data = metadata.get("ws_solver") if cache_hit and session.active else None
        if isinstance(data, dict):
            report = CompileReport.from_dict(data)
            if report is not None:
                report.notes.append("served from Triton's cache: this report is the compile's")
                with lock:
                    session.reports.append(report)

    listener.ws_solver_session = session  # type: ignore[attr-defined]
    return listener


def reset_jit_caches() -> int:
    """Forget in-memory compiled kernels and autotuning choices of every live @triton.jit /
    @triton.autotune object, so the next launch compiles (or loads) under the current
    strategy. Triton keys its in-memory cache by arguments and options only."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
    except ImportError:
        return 0
    jits, tuners = _subclasses(JITFunction), _subclasses(Autotuner)
    wanted = jits | tuners
    cleared = 0
    # A set lookup of each object's type, not two isinstance calls: every live object is
    # visited, and enable() and disable() each pay for it (a third of the time).
    for obj in [o for o in gc.get_objects() if type(o) in wanted]:
        try:
            if type(obj) in jits:
                for caches in obj.device_caches.values():
                    caches[0].clear()
                cleared += 1
            else:
                obj.cache.clear()
        except Exception:  # a foreign subclass with other internals: leave it be
            continue
    return cleared


def _subclasses(cls: type) -> set[type]:
    """``cls`` and every class derived from it, however indirectly."""
    found, todo = {cls}, [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


# -- the hook Triton calls at each compile ----------------------------------------------------
def make_hook(session: Session) -> Callable[..., Any]:
    def install(backend: Any, stages: dict, options: Any, language: Any, capability: Any) -> None:
        if session.active and _applies(backend, stages, language, capability):
            compile_ = KernelCompile(session, stages, options, int(capability))
            stages["ttgir"] = compile_.ttgir
            if "llir" in stages:
                stages["llir"] = compile_.llir
            if "ptx" in stages:
                stages["ptx"] = compile_.ptx
            if "cubin" in stages:
                stages["cubin"] = compile_.cubin
        # Chain: an earlier hook sees (and may wrap) the stages as we left them.
        if session.prev_hook is not None:
            session.prev_hook(backend, stages, options, language, capability)

    def key() -> str:
        own = f"ws_solver-{session.settings.strategy}-{session.settings.digest()}"
        return own if not session.active else own + versions.hook_key(session.prev_hook)

    hook = versions.stages_hook(install, key)
    hook.ws_solver_session = session  # type: ignore[attr-defined]
    return hook


def _applies(backend: Any, stages: dict, language: Any, capability: Any) -> bool:
    from triton.backends.compiler import Language

    target = getattr(backend, "target", None)
    return (
        getattr(target, "backend", None) == "cuda"
        and language == Language.TRITON
        and isinstance(capability, int)
        and capability >= 90
        and "ttgir" in stages
    )

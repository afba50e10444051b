"""The drop-in: compile every warp-specialized Triton kernel through ws_solver's partitioner.

``enable()`` installs a ``triton.knobs.runtime.add_stages_inspection_hook`` whose ``ttgir``
stage, for kernels compiled for sm_90 or newer whose TTIR has a loop tagged
``tt.warp_specialize``, runs make_ttgir up to the partitioner input point, partitions the
text with ``ws_solver.pipeline.partition_text`` (or leaves it to Triton's own partitioner,
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
import importlib
import json
import os
import re
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import plancache
from ..pipeline import LoopError, LoopPlace, LoopReport, SolveOptions, partition_text
from ..strategy import DROPIN_STRATEGIES, Explore, Strategy, parse_strategy
from . import guard as lguard
from . import pipeline as tpipe
from .overlap import sink_wgmma_waits_report
from .wgrelease import release_per_warp_group, release_ring_depth

STRATEGIES = DROPIN_STRATEGIES
# What to try, in order, for each strategy asked for: it, then the ones after it in
# DROPIN_STRATEGIES; Triton's unmodified stage comes last.
FALLBACKS: dict[Strategy, tuple[Strategy, ...]] = {
    s: DROPIN_STRATEGIES[k:] for k, s in enumerate(DROPIN_STRATEGIES)
}


def fallbacks_for(strategy: Strategy | Explore) -> tuple[Strategy | Explore, ...]:
    """FALLBACKS, with "explore:K" (a plan of `ws-solver explore`) falling back as optimal."""
    if isinstance(strategy, Explore):
        return (strategy, *FALLBACKS[Strategy.OPTIMAL])
    return FALLBACKS[strategy]


STOCK = "stock"  # strategy_used: Triton's own make_ttgir, as if ws_solver were not enabled

_WS_LOOP = re.compile(r"^\s*\}.*\btt\.warp_specialize(?![\w.])", re.MULTILINE)
_FUNC = re.compile(r"\btt\.func\s+(?:(public|private)\s+)?@([\w$.]+)")
_WS_OP = re.compile(r"\bttg\.warp_specialize\(")
_REGION = re.compile(r"^\s*partition(\d+)\(.*\)\s*num_warps\((\d+)\)\s*\{\s*$")
_REQUESTED = re.compile(r"requestedRegisters\s*=\s*array<i32:\s*([\d,\s]*)>")
_SETMAXNREG = re.compile(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)")
_MLIR_ERROR = re.compile(r"error:\s*(.+)")
_ASSERTION = re.compile(r"Assertion `(.+?)' failed")
_UNREACHABLE = re.compile(r"([^\n]*)\n[^\n]*UNREACHABLE executed at [^\n]*?([\w.]+:\d+)!")
_FAILED_PIPELINE = re.compile(r"Pipeline failed while executing \[(.*?)\]")
_PASS_NAME = re.compile(r"`(\w+)` on")

_SOURCES_THAT_CHANGE_BINARIES = (
    "ir",
    "model",
    "heuristic_seed",
    "encode",
    "triton",
    "pipeline.py",
    "plancache.py",
)


class WSFallbackWarning(UserWarning):
    """A kernel was not compiled with the strategy asked for (see the message for why)."""


@dataclass(frozen=True)
class Settings:
    """What the drop-in does while enabled."""

    strategy: Strategy | Explore = Strategy.OPTIMAL
    solve: SolveOptions = field(default_factory=SolveOptions)
    apply_registers: bool = True
    # Sink sm_90 wgmma waits to their first use (overlap.py).
    overlap_wgmma: bool = True
    # Seconds a partitioned module's lowering may take in the guard's child process before
    # the attempt counts as hung; None: lower in-process without the guard. Not part of the
    # digest: it does not change what a finished lowering produces.
    lowering_timeout: float | None = lguard.DEFAULT_TIMEOUT_S
    # sm_90: release a two-warp-group consumer's stages per warp group, in the PTX
    # (wgrelease.py).
    release_per_warp_group: bool = True

    def digest(self) -> str:
        """Names the binaries these settings produce (Triton's cache key does not)."""
        return plancache.digest(
            {
                "strategy": self.strategy,
                "solve": plancache.canonical(self.solve, skip=frozenset({"cache"})),
                "apply_registers": self.apply_registers,
                "overlap_wgmma": self.overlap_wgmma,
                "release_per_warp_group": self.release_per_warp_group,
                "code": plancache.code_version(_SOURCES_THAT_CHANGE_BINARIES),
                "hopper_fix": _hopper_fix() is not None,
            }
        )


@dataclass
class CompileReport:
    """What the drop-in did to one kernel compile."""

    kernel: str
    capability: int
    strategy_asked: str
    strategy_used: str = ""
    loops: list[dict] = field(default_factory=list)  # per WS loop, of the attempt used
    fallbacks: list[dict] = field(default_factory=list)  # {strategy, loops, reason, wall_s}
    lowered: list[dict] = field(default_factory=list)  # per ttg.warp_specialize op
    probes: list[dict] = field(default_factory=list)  # {strategy, status, stage, wall_s, ...}
    notes: list[str] = field(default_factory=list)
    setmaxnreg: list[int] | None = None  # distinct setmaxnreg values in the PTX
    wall_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


# -- enable / disable -------------------------------------------------------------------------
_NOTHING = object()
_lock = threading.RLock()


@dataclass
class _Session:
    settings: Settings
    cache_base: str | None
    cache_dir: str
    prev_hook: Any
    prev_knob: Any  # knobs.cache.__dict__["dir"] before enable(), or _NOTHING
    prev_env: str | None  # $TRITON_CACHE_DIR before enable()
    reports: list[CompileReport] = field(default_factory=list)
    active: bool = True
    hopper_warned: bool = False
    guard_warned: bool = False


_session: _Session | None = None


def enable(
    strategy: Strategy | str = Strategy.OPTIMAL,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    *,
    cache: bool = True,
    apply_registers: bool = True,
    overlap_wgmma: bool = True,
    release_per_warp_group: bool = True,
    cache_dir: str | os.PathLike | None = None,
    lowering_timeout: float | None = lguard.DEFAULT_TIMEOUT_S,
    **options: Any,
) -> Settings:
    """Compile warp-specialized kernels through ws_solver until ``disable()``.

    ``strategy``: "optimal" (CP-SAT, seeded by the heuristic), "heuristic", "triton"
    (Triton's own partitioner through the same pipeline), "none" (no specialization) or
    "explore:K" (each loop's K-th best plan under the cost model, as `ws-solver explore`
    lists them; rank 0 is the modeled optimum).
    ``cache=False`` neither reads nor writes the plan cache. ``apply_registers=False``
    leaves Triton's register requests alone. ``overlap_wgmma=False`` leaves Triton's sm_90
    wgmma waits where its pipeliner put them (see ``ws_solver.triton.overlap``).
    ``release_per_warp_group=False`` keeps Triton's partition-wide stage releases; by default
    the two warp groups of an 8-warp sm_90 consumer release each on its own
    (``ws_solver.triton.wgrelease``). Binaries go to
    ``<cache_dir or triton.knobs.cache.dir>/ws_solver-<strategy>-<digest>``; other
    keyword ``options`` are SolveOptions fields. ``lowering_timeout``: seconds Triton's
    lowering of a partitioned module may take in the guard's child process before the
    attempt is abandoned as hung (``None`` or 0: no guard, lower in-process directly).
    """
    strategy = parse_strategy(strategy, DROPIN_STRATEGIES)
    if lowering_timeout is not None and lowering_timeout < 0:
        raise ValueError(f"lowering_timeout must be positive or None, got {lowering_timeout}")
    solve = SolveOptions(time_limit=time_limit, workers=workers, seed=seed, cache=cache, **options)
    settings = Settings(
        strategy,
        solve,
        apply_registers,
        overlap_wgmma,
        lowering_timeout or None,
        release_per_warp_group,
    )
    with _lock:
        if _session is not None:
            _uninstall()
        _install(settings, None if cache_dir is None else os.fspath(cache_dir))
    return settings


def disable() -> None:
    """Restore the hook and the cache directory that were there before ``enable()``."""
    with _lock:
        if _session is not None:
            _uninstall()


@contextlib.contextmanager
def partitioner(strategy: Strategy | str = Strategy.OPTIMAL, **kwargs: Any) -> Iterator[Settings]:
    """``with partitioner("heuristic"): ...`` — enable for the block, then restore."""
    with _lock:
        outer = _session
    settings = enable(strategy, **kwargs)
    try:
        yield settings
    finally:
        with _lock:
            if _session is not None:
                _uninstall()
            if outer is not None:
                _install(outer.settings, outer.cache_base, outer.reports)


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
    with _lock:
        return list(session.reports) if session else []


def last_compile_report() -> CompileReport | None:
    reports = compile_reports()
    return reports[-1] if reports else None


def _install(settings: Settings, cache_base: str | None, reports=None) -> None:
    global _session
    from triton import knobs

    prev_knob = knobs.cache.__dict__.get("dir", _NOTHING)
    prev_env = os.environ.get("TRITON_CACHE_DIR")
    base = cache_base if cache_base is not None else knobs.cache.dir
    where = os.path.join(base, f"ws_solver-{settings.strategy}-{settings.digest()[:16]}")
    session = _Session(
        settings=settings,
        cache_base=cache_base,
        cache_dir=where,
        prev_hook=knobs.runtime.add_stages_inspection_hook,
        prev_knob=prev_knob,
        prev_env=prev_env,
        reports=reports if reports is not None else [],
    )
    knobs.cache.dir = where
    knobs.runtime.add_stages_inspection_hook = _make_hook(session)
    _session = session
    reset_jit_caches()


def _uninstall() -> None:
    global _session
    from triton import knobs

    session = _session
    assert session is not None
    session.active = False
    hook = knobs.runtime.add_stages_inspection_hook
    if getattr(hook, "ws_solver_session", None) is session:
        knobs.runtime.add_stages_inspection_hook = session.prev_hook
    # else: someone installed a hook after ours; ours now only forwards to its predecessor.
    if session.prev_knob is _NOTHING:
        knobs.cache.__dict__.pop("dir", None)
    else:
        knobs.cache.__dict__["dir"] = session.prev_knob
    if session.prev_env is None:
        os.environ.pop("TRITON_CACHE_DIR", None)
    else:
        os.environ["TRITON_CACHE_DIR"] = session.prev_env
    _session = None
    reset_jit_caches()


def reset_jit_caches() -> int:
    """Forget in-memory compiled kernels and autotuning choices of every live @triton.jit /
    @triton.autotune object, so the next launch compiles (or loads) under the current
    strategy. Triton keys its in-memory cache by arguments and options only."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
    except ImportError:
        return 0
    cleared = 0
    for obj in gc.get_objects():
        try:
            if isinstance(obj, JITFunction):
                for caches in obj.device_caches.values():
                    caches[0].clear()
                cleared += 1
            elif isinstance(obj, Autotuner):
                obj.cache.clear()
        except Exception:  # a foreign subclass with other internals: leave it be
            continue
    return cleared


# -- the hook ---------------------------------------------------------------------------------
def _make_hook(session: _Session) -> Callable[..., None]:
    def hook(backend: Any, stages: dict, options: Any, language: Any, capability: Any) -> None:
        if session.active and _applies(backend, stages, language, capability):
            compile_ = _KernelCompile(session, stages, options, int(capability))
            stages["ttgir"] = compile_.ttgir
            if "ptx" in stages:
                stages["ptx"] = compile_.ptx
            if "cubin" in stages:
                stages["cubin"] = compile_.cubin
        # Chain: an earlier hook sees (and may wrap) the stages as we left them.
        if session.prev_hook is not None:
            session.prev_hook(backend, stages, options, language, capability)

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


class _KernelCompile:
    """One kernel compile: the replacement ttgir stage and the PTX observer."""

    def __init__(self, session: _Session, stages: dict, options: Any, capability: int) -> None:
        self.session = session
        self.settings = session.settings
        self.stock_ttgir = stages["ttgir"]
        self.stock_ptx = stages.get("ptx")
        self.stock_cubin = stages.get("cubin")
        self.unreleased_ptx: str | None = None  # the PTX before wgrelease rewrote it
        self.options = options
        self.capability = capability
        self.report: CompileReport | None = None
        self.release_ring_depth: int | None = None  # set when a specialized module lowered

    # ttgir ---------------------------------------------------------------------------------
    def ttgir(self, mod: Any, metadata: dict) -> Any:
        ttir = mod.str()
        if not _WS_LOOP.search(ttir):
            return self.stock_ttgir(mod, metadata)  # exactly what Triton would do
        start = time.perf_counter()
        report = CompileReport(_kernel_name(ttir), self.capability, self.settings.strategy)
        self.report = report
        context = mod.context
        if self.settings.lowering_timeout and self.settings.strategy != Strategy.NONE:
            lguard.guard().start()  # Triton's import in the helper overlaps partitioning
        result = None
        try:
            with _captured_stderr() as err:
                tpipe.run_until_partition(mod, self.options, self.capability)
            err.replay()
            part_text = mod.str()
        except Exception as e:
            report.fallbacks.append(_failure("partition point", [], e, err.text, 0.0))
            part_text = None
        sites = _loop_sites(part_text) if part_text is not None else []
        if part_text is not None:
            for strategy in fallbacks_for(self.settings.strategy):
                result = self._attempt(strategy, part_text, context, metadata, sites)
                if result is not None:
                    break
        if result is None:
            report.strategy_used = STOCK
            try:
                result = self.stock_ttgir(tpipe.parse_module_text(ttir, context), metadata)
            finally:
                self._finish(start, metadata)
            return result
        self._finish(start, metadata)
        return result

    def _attempt(
        self, strategy: Strategy, part_text: str, context: Any, metadata: dict, sites: list[dict]
    ) -> Any:
        """Compile ``part_text`` with ``strategy``; the module on success, None on failure."""
        report = self.report
        assert report is not None
        start = time.perf_counter()
        loop_reports: list[LoopReport] = []
        info: dict = {"lowered": [], "notes": []}
        err = None
        try:
            with _captured_stderr() as err:
                if strategy == Strategy.TRITON:
                    annotated = part_text
                else:
                    annotated, loop_reports = partition_text(
                        part_text, strategy, options=self.settings.solve
                    )
                    _check_solver_status(loop_reports)
                plans = [r.plan for r in loop_reports if r.specialized]
                if strategy == Strategy.TRITON or plans:
                    self._probe(strategy, annotated, plans)
                post = self._post_pipeline(strategy, plans, info)
                new_mod = tpipe.parse_module_text(annotated, context)
                result = tpipe.run_after_partition(
                    new_mod, self.options, self.capability, metadata, post_pipeline=post
                )
        except Exception as e:
            where = _failed_loops(e, loop_reports, sites)
            elapsed = time.perf_counter() - start
            report.fallbacks.append(_failure(strategy, where, e, err.text if err else "", elapsed))
            return None
        err.replay()
        if info.get("hopper_missing"):
            self._warn_hopper_once()
        report.strategy_used = strategy
        self.release_ring_depth = info.get("release_ring_depth")
        report.lowered = info["lowered"]
        report.notes.extend(info["notes"])
        report.loops = _loop_records(strategy, loop_reports, sites, info)
        return result

    def _post_pipeline(self, strategy: Strategy, plans: list, info: dict) -> Callable[[str], str]:
        """The rewrite run after pipeline/optimize_partition_warps (see
        ``post_pipeline_rewrite``)."""
        hopper = _hopper_fix() if self.capability // 10 == 9 else None
        return post_pipeline_rewrite(
            self.capability,
            self.options.num_warps,
            plans,
            self.settings.apply_registers,
            hopper,
            info,
            overlap=self.settings.overlap_wgmma,
        )

    def _probe(self, strategy: Strategy, annotated: str, plans: list) -> None:
        """Lower ``annotated`` in the guard's child process first; raise LoweringRejected
        when that hangs, crashes or fails (the attempt then falls back without touching
        this process). An unavailable guard lets the attempt go on unguarded."""
        timeout = self.settings.lowering_timeout
        if not timeout:
            return
        job = lguard.LoweringJob(
            text=annotated,
            capability=self.capability,
            options=self.options,
            num_warps=self.options.num_warps,
            registers=tuple(
                tuple((p.id, p.registers) for p in sorted(plan.partitions, key=lambda p: p.id))
                for plan in plans
            ),
            apply_registers=self.settings.apply_registers,
            overlap=self.settings.overlap_wgmma,
            hopper=self.capability // 10 == 9 and _hopper_fix() is not None,
        )
        where = os.path.join(self.session.cache_dir, "lowering-probes")
        verdict = lguard.guard().probe(job, timeout, cache_dir=where)
        report = self.report
        assert report is not None
        report.probes.append({"strategy": strategy, **verdict.summary()})
        if verdict.ok:
            return
        if not verdict.usable:
            report.notes.append(f"lowering not guarded: {verdict.reason}")
            self._warn_guard_once(verdict.reason)
            return
        raise LoweringRejected(verdict)

    def _warn_guard_once(self, why: str) -> None:
        if self.session.guard_warned:
            return
        self.session.guard_warned = True
        warnings.warn(
            f"ws_solver: {why}; partitioned kernels are lowered in this process without a "
            "time limit (see docs/dropin.md)",
            WSFallbackWarning,
            stacklevel=2,
        )

    def _warn_hopper_once(self) -> None:
        if self.session.hopper_warned:
            return
        self.session.hopper_warned = True
        warnings.warn(
            "ws_solver: ws_solver.triton.hopper is not available; warp-specialized sm_90 "
            "kernels are compiled through Triton 3.6's generic route without the "
            "async-wgmma release fix (see docs/dropin.md)",
            WSFallbackWarning,
            stacklevel=2,
        )

    def _finish(self, start: float, metadata: dict) -> None:
        report = self.report
        assert report is not None
        report.wall_s = round(time.perf_counter() - start, 4)
        with _lock:
            self.session.reports.append(report)
        metadata["ws_solver"] = report.to_dict()
        if report.fallbacks:
            warnings.warn(_fallback_message(report), WSFallbackWarning, stacklevel=2)

    # ptx -----------------------------------------------------------------------------------
    def _wants_release(self) -> bool:
        """Per-warp-group release asked for, on sm_90, and the module was specialized."""
        return bool(
            self.settings.release_per_warp_group
            and self.capability // 10 == 9
            and self.report is not None
            and self.report.lowered
        )

    def ptx(self, src: Any, metadata: dict) -> Any:
        assert self.stock_ptx is not None
        out = self.stock_ptx(src, metadata)
        if self.report is not None and isinstance(out, str) and self._wants_release():
            released, done = release_per_warp_group(
                out, self.options.num_warps, self.release_ring_depth or 0
            )
            self.report.notes.append(done.note())
            if released != out:
                self.unreleased_ptx, out = out, released
        if self.report is not None and isinstance(out, str):
            self.report.setmaxnreg = sorted({int(v) for _, v in _SETMAXNREG.findall(out)})
            metadata["ws_solver"] = self.report.to_dict()
        return out

    def cubin(self, src: Any, metadata: dict) -> Any:
        """ptxas; if it rejects the PTX wgrelease rewrote, assemble the PTX as Triton wrote it
        (a compile never breaks on the rewrite)."""
        assert self.stock_cubin is not None
        if self.unreleased_ptx is None:
            return self.stock_cubin(src, metadata)
        try:
            return self.stock_cubin(src, metadata)
        except Exception as e:
            assert self.report is not None
            self.report.notes.append(
                f"per-warp-group release undone: ptxas rejected it ({_reason(e, '')})"
            )
            metadata["ws_solver"] = self.report.to_dict()
            return self.stock_cubin(self.unreleased_ptx, metadata)


def post_pipeline_rewrite(
    capability: int,
    num_warps: int,
    plans: list,
    apply_registers: bool,
    hopper: Callable[[str], tuple[str, str]] | None,
    info: dict,
    overlap: bool = False,
) -> Callable[[str], str]:
    """The rewrite run after pipeline/optimize_partition_warps: observe what Triton lowered
    (``info["lowered"]``), apply the plans' register requests, then (sm_90) sink the wgmma
    waits when ``overlap`` and apply the Hopper fix.
    Notes go to ``info["notes"]``; ``info["hopper_missing"]`` says the fix was wanted but
    ``hopper`` is None. The guard's child runs the same function."""

    def rewrite(text: str) -> str:
        info["lowered"] = lowered_ops(text, num_warps)
        if plans and apply_registers:
            text, applied, notes = apply_plan_registers(text, plans)
            info["registers"] = applied
            info.setdefault("notes", []).extend(notes)
            if len(applied) == len(info["lowered"]):
                for op, want in zip(info["lowered"], applied, strict=True):
                    op["registers_applied"] = want
        if capability // 10 == 9 and overlap:
            text, done = sink_wgmma_waits_report(text)
            if done.sunk:
                info.setdefault("notes", []).append(
                    f"wgmma overlap: {done.sunk} wait(s) sunk past {done.passed_ops} op(s), "
                    f"{done.carried_releases} release(s) moved with them"
                )
        if capability // 10 == 9 and info["lowered"]:
            if hopper is None:
                info.setdefault("notes", []).append("hopper fix unavailable")
                info["hopper_missing"] = True
            else:
                text, note = hopper(text)
                info.setdefault("notes", []).append(note)
        info["release_ring_depth"] = release_ring_depth(text)
        return text

    return rewrite


# -- plan decisions on the lowered op ---------------------------------------------------------
def lowered_ops(text: str, default_warps: int) -> list[dict]:
    """Per ``ttg.warp_specialize`` op: warps of the default region and of each partition
    region, and the ``requestedRegisters`` Triton chose (None if absent). ``partitions``
    counts the default region too."""
    ops: list[dict] = []
    for line in text.splitlines():
        if _WS_OP.search(line):
            requested = _REQUESTED.search(line)
            ops.append(
                {
                    "warps": [default_warps],
                    "requested_registers": (
                        [int(v) for v in requested.group(1).replace(",", " ").split()]
                        if requested
                        else None
                    ),
                }
            )
            continue
        region = _REGION.match(line)
        if region and ops:
            ops[-1]["warps"].append(int(region.group(2)))
    for op in ops:
        op["partitions"] = len(op["warps"])
    return ops


def apply_plan_registers(text: str, plans: list) -> tuple[str, list, list[str]]:
    """Set each lowered op's ``requestedRegisters`` to its plan's per-partition registers.

    Plans are matched to ``ttg.warp_specialize`` ops in order (one op per specialized loop,
    in loop order); plan partition 0 is the default region, partition k is region k-1.
    Returns (text, per op: registers written or None, notes about what was not applied).
    """
    from .. import ir as wir
    from ..ir.attributes import i32_array

    module = wir.parse(text)
    ops = [op for op in module.walk() if op.name == "ttg.warp_specialize"]
    if len(ops) != len(plans):
        note = f"registers not applied: {len(ops)} warp_specialize ops for {len(plans)} plans"
        return text, [None] * len(plans), [note]
    applied: list = []
    notes: list[str] = []
    for index, (op, plan) in enumerate(zip(ops, plans, strict=True)):
        parts = sorted(plan.partitions, key=lambda p: p.id)
        current = op.attr("requestedRegisters")
        want = [min(256, max(24, -(-p.registers // 8) * 8)) for p in parts[1:]]
        if [p.id for p in parts] != list(range(len(parts))):
            why = "partition ids are not 0..P-1"
        elif current is None:
            why = "Triton set no requestedRegisters"
        elif len(current) != len(want):
            why = f"Triton lowered {len(current) + 1} partitions, the plan has {len(parts)}"
        else:
            op.set_attr("requestedRegisters", i32_array(want))
            applied.append(want)
            continue
        applied.append(None)
        notes.append(f"registers not applied to warp_specialize op {index}: {why}")
    return module.print(), applied, notes


# -- helpers ----------------------------------------------------------------------------------
class SolverGaveNoPlan(RuntimeError):
    """The solver ended without a plan of its own (infeasible, or out of time)."""


class LoweringRejected(RuntimeError):
    """The guard's child process could not lower the partitioned module (it hung, crashed or
    failed); ``verdict`` says how, ``reason`` is the one-line summary."""

    def __init__(self, verdict: lguard.Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict
        self.reason = verdict.reason


def _check_solver_status(loop_reports: list[LoopReport]) -> None:
    """Treat a loop whose solver status is not OPTIMAL/FEASIBLE as a failed attempt (the
    pipeline then hands back its hint, which is the heuristic's plan, not an optimal one)."""
    for r in loop_reports:
        status = r.solver.get("status")
        if status is not None and status not in ("OPTIMAL", "FEASIBLE"):
            e = SolverGaveNoPlan(f"solver status {status} on loop {r.loop}")
            raise LoopError(LoopPlace(r.kernel, r.loop, r.line), e)


def _hopper_fix() -> Callable[[str], tuple[str, str]] | None:
    """``ws_solver.triton.hopper.fix_async_wgmma_release`` (text -> (text, note)) if that
    module exists; the note says what the fix did when the module can tell."""
    try:
        module = importlib.import_module(f"{__package__}.hopper")
    except ImportError:
        return None
    detailed = getattr(module, "fix_async_wgmma_release_report", None)
    if detailed is not None:

        def fix(text: str) -> tuple[str, str]:
            out, done = detailed(text)
            counts = ", ".join(
                f"{name} {getattr(done, name)}"
                for name in ("deferred", "moved", "synchronous")
                if hasattr(done, name)
            )
            return out, f"hopper fix applied ({counts})" if counts else "hopper fix applied"

        return fix
    plain = getattr(module, "fix_async_wgmma_release", None)
    if plain is None:
        return None
    return lambda text: (plain(text), "hopper fix applied")


def _kernel_name(ttir: str) -> str:
    funcs = _FUNC.findall(ttir)
    public = [name for vis, name in funcs if vis == "public"]
    return (public or [name for _, name in funcs] or ["<unknown>"])[0]


def _loop_sites(part_text: str) -> list[dict]:
    """Index, TTGIR line and Python source position of each WS loop (best effort)."""
    try:
        from .. import ir as wir
        from ..model.dfg import ws_loops

        module = wir.parse(part_text)
        return [
            {"loop": loop.index, "line": loop.op.line, "source": module.source_location(loop.op)}
            for loop in ws_loops(module)
        ]
    except Exception:
        return [{"loop": i, "line": 0, "source": ""} for i in range(_count_ws(part_text))]


def _count_ws(text: str) -> int:
    return len(_WS_LOOP.findall(text))


def _failed_loops(e: Exception, loop_reports: list[LoopReport], sites: list[dict]) -> list[dict]:
    """The loops an exception is about: the one ws_solver names, else the specialized ones,
    else all WS loops of the kernel."""
    if isinstance(e, LoopError):
        return [s for s in sites if s["loop"] == e.loop.loop] or [e.loop.to_dict()]
    specialized = {r.loop for r in loop_reports if r.specialized}
    return [s for s in sites if s["loop"] in specialized] or sites


def _failure(strategy: str, loops: list[dict], e: Exception, stderr: str, wall: float) -> dict:
    if isinstance(e, LoopError):
        e = e.error
    reason = e.reason if isinstance(e, LoweringRejected) else _reason(e, stderr)
    return {
        "strategy": strategy,
        "loops": loops,
        "reason": reason,
        "wall_s": round(wall, 4),
    }


def _reason(e: Exception, stderr: str) -> str:
    """One line: the exception, plus the MLIR error and failing pass when Triton printed them."""
    text = str(e).strip()
    return _reason_from(type(e).__name__, text.splitlines()[0] if text else "", stderr)


def _reason_from(type_name: str, first: str, stderr: str) -> str:
    """``_reason`` from an exception's type name and first line (the guard's child sends
    those)."""
    reason = f"{type_name}: {first}" if first else type_name
    errors = _MLIR_ERROR.findall(stderr)
    useful = [m for m in errors if "Failures have been detected" not in m]
    assertion = _ASSERTION.search(stderr)
    unreachable = _UNREACHABLE.search(stderr)
    if assertion:  # a failed assertion says more than "A signal was caught"
        useful.insert(0, f"assertion failed: {assertion.group(1)}")
    elif unreachable:
        useful.insert(0, f"unreachable: {unreachable.group(1)} ({unreachable.group(2)})")
    if useful:
        reason += f" ({useful[0].strip()[:200]})"
    failed = _FAILED_PIPELINE.search(stderr)
    if failed:
        names = _PASS_NAME.findall(failed.group(1))
        if names:
            reason += f" [in {' > '.join(names)}]"
    return reason


def _describe_loops(loops: list[dict]) -> str:
    if not loops:
        return "the kernel"
    parts = []
    for s in loops:
        where = s.get("source") or (f"TTGIR line {s['line']}" if s.get("line") else "")
        parts.append(f"loop {s.get('loop')}" + (f" ({where})" if where else ""))
    return ", ".join(parts)


def _fallback_message(report: CompileReport) -> str:
    failures = "; ".join(
        f"{f['strategy']} failed on {_describe_loops(f['loops'])}: {f['reason']}"
        for f in report.fallbacks
    )
    used = "Triton's own make_ttgir" if report.strategy_used == STOCK else report.strategy_used
    return (
        f"ws_solver: kernel '{report.kernel}' (sm_{report.capability}) asked for "
        f"{report.strategy_asked}: {failures}; compiled with {used}"
    )


def _loop_records(
    strategy: Strategy, loop_reports: list[LoopReport], sites: list[dict], info: dict
) -> list[dict]:
    by_loop = {s["loop"]: s for s in sites}
    if strategy == Strategy.TRITON:
        return [{**s, "strategy": Strategy.TRITON} for s in sites]
    registers = iter(info.get("registers") or [])
    records = []
    for r in loop_reports:
        # JSON-shaped (lists, not tuples): the record also travels in the binary's metadata.
        plan = json.loads(r.plan.to_json())
        record = {**by_loop.get(r.loop, {}), **r.to_dict(), "plan": plan}
        if r.specialized:
            record["registers_applied"] = next(registers, None)
        records.append(record)
    return records


class _Captured:
    text = ""

    def replay(self) -> None:
        if self.text:
            sys.stderr.write(self.text)
            sys.stderr.flush()


@contextlib.contextmanager
def _captured_stderr() -> Iterator[_Captured]:
    """Collect what MLIR/Triton print on file descriptor 2 (diagnostics, crash reproducers)
    so that a failed attempt can be summarised instead of flooding the terminal."""
    captured = _Captured()
    with _lock:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no usable fd 2: nothing to capture
            yield captured
            return
        with tempfile.TemporaryFile(mode="w+b") as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield captured
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                tmp.seek(0)
                captured.text = tmp.read().decode(errors="replace")

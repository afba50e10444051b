"""``ws_solver.triton.autotune``: the fastest correct build of a kernel, measured at launch.

    import ws_solver.triton as wst

    @wst.autotune(key=["M", "N", "K"])          # candidates: heuristic, optimal, none, ...
    @triton.jit
    def kernel(...): ...

On the first launch for a key on a live GPU, every candidate (a drop-in strategy with its
knobs, ``ws_solver.triton.autotuning.candidates``) is built and run once against the unspecialized
reference on the same inputs; the candidates that agree are timed in interleaved rounds
and the fastest is kept, in memory and on disk (``tunecache``). Without a GPU, or with
``WS_SOLVER_AUTOTUNE=0``, the ``default`` candidate is built and a warning says so once.
Keyword names and behaviour follow ``triton.autotune``. See docs/autotune.md.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from triton.runtime.jit import KernelInterface

from ...core.candidates import (
    DEFAULT_CANDIDATES,
    DEFAULT_STRATEGY,
    REFERENCE,
    Candidate,
    expand,
    parse,
)
from . import tunecache
from .launcher import TritonLauncher
from .tuning import Call, Hooks, Outcome, ReferenceFailed, Tuning, TuningReport, call_key

SWITCH_ENV = "WS_SOLVER_AUTOTUNE"  # "0": build the default candidate, tune nothing
ROUNDS = 3

_reports: list[TuningReport] = []
_reports_lock = threading.Lock()


class WSTuningWarning(UserWarning):
    """Tuning did not happen, or candidates were discarded (the message says which and why)."""


def tuning_reports() -> list[TuningReport]:
    """Every tuning choice made (or read from the cache) in this process, oldest first."""
    with _reports_lock:
        return list(_reports)


def last_tuning_report() -> TuningReport | None:
    """The most recent tuning choice: candidates, times, discards and the winner."""
    with _reports_lock:
        return _reports[-1] if _reports else None


def autotune(
    key: Sequence[str] = (),
    candidates: Sequence[str] | str = DEFAULT_CANDIDATES,
    *,
    default: str = DEFAULT_STRATEGY,
    reset_to_zero: Sequence[str] | None = None,
    restore_value: Sequence[str] | None = None,
    pre_hook: Callable[..., Any] | None = None,
    post_hook: Callable[..., Any] | None = None,
    prune_configs_by: Mapping[str, Any] | None = None,
    warmup: float = 25,
    rep: float = 100,
    do_bench: Callable[..., Any] | None = None,
    rounds: int = ROUNDS,
    outputs: Sequence[str] | None = None,
    tolerance: float | None = None,
    cache_results: bool = True,
    enable_options: Mapping[str, Any] | None = None,
) -> Callable[[Any], Autotuner]:
    """Decorate a ``@triton.jit`` kernel (or a ``@triton.autotune`` over one) so that each
    key is launched with its fastest correct candidate.

    ``key``, ``reset_to_zero``, ``restore_value``, ``pre_hook``, ``post_hook``,
    ``prune_configs_by`` (over candidates), ``warmup``/``rep`` (ms, for do_bench) and
    ``do_bench`` (``fn, quantiles -> ms``) mean what they mean in ``triton.autotune``.
    ``candidates``: names as in ``autotuning.candidates`` (``top:N`` is the N best
    plans, ``explore:K`` the plan of rank K). ``default``: what is built when nothing is
    tuned. ``rounds``: interleaved timing rounds. ``outputs``: the arguments to poison and
    compare (default: the tensors the reference's run changes). ``tolerance``: the relative
    error allowed (default: per dtype).
    ``cache_results=False``: neither read nor write the on-disk choices.
    ``enable_options``: ``ws_solver.triton.enable`` keywords for every build (``solve``, a
    whole SolveOptions, or time_limit, ...; cache_dir, lowering_timeout, ...).
    """

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(
            fn,
            getattr(fn, "arg_names", ()),  # not a kernel: the launcher says so
            key=key,
            candidates=candidates,
            default=default,
            hooks=Hooks(reset_to_zero or (), restore_value or (), pre_hook, post_hook),
            prune_configs_by=prune_configs_by,
            timer=timer_from(do_bench, warmup, rep),
            rounds=rounds,
            outputs=outputs,
            tolerance=tolerance,
            cache_results=cache_results,
            enable_options=enable_options,
        )

    return decorator


def timer_from(do_bench: Callable[..., Any] | None, warmup: float, rep: float) -> Callable:
    """A ``call -> ms`` timer from a Triton-style ``do_bench(fn, quantiles)`` (default:
    ``triton.testing.do_bench`` with ``warmup`` and ``rep``)."""

    def timer(call: Callable[[], None]) -> float:
        if do_bench is None:
            from triton.testing import do_bench as bench

            result = bench(call, warmup=warmup, rep=rep, quantiles=(0.5, 0.2, 0.8))
        else:
            result = do_bench(call, quantiles=(0.5, 0.2, 0.8))
        return float(result[0] if isinstance(result, list | tuple) else result)

    return timer


class Autotuner(KernelInterface):
    """What ``autotune`` returns: launched as ``kernel[grid](...)`` like the kernel it wraps."""

    def __init__(
        self,
        fn: Any,
        arg_names: Sequence[str],
        key: Sequence[str] = (),
        candidates: Sequence[str] | str = DEFAULT_CANDIDATES,
        default: str = DEFAULT_STRATEGY,
        hooks: Hooks | None = None,
        prune_configs_by: Mapping[str, Any] | None = None,
        timer: Callable[[Callable[[], None]], float] | None = None,
        rounds: int = ROUNDS,
        outputs: Sequence[str] | None = None,
        tolerance: float | None = None,
        cache_results: bool = True,
        enable_options: Mapping[str, Any] | None = None,
        launcher: Any = None,
        drop_behind: float | None = None,
        settle_rounds: int = 0,
    ) -> None:
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds}")
        self.fn = fn
        self.arg_names = list(arg_names)
        self.keys = list(key)
        self.candidates = expand(candidates)
        self.default = parse(default)
        self.hooks = hooks or Hooks()
        self.prune_configs_by = dict(prune_configs_by or {})
        self.timer = timer or timer_from(None, 25, 100)
        self.rounds = rounds
        self.drop_behind = drop_behind  # Tuning.drop_behind
        self.settle_rounds = settle_rounds  # Tuning.settle_rounds
        self.outputs = list(outputs) if outputs is not None else None
        self.tolerance = tolerance
        self.cache_results = cache_results
        self.enable_options = dict(enable_options or {})
        self.launcher = launcher or TritonLauncher(fn, self.enable_options)
        self.launcher.check_candidates((*self.candidates, self.default))
        self.cache: dict[tuple[str, ...], Candidate] = {}
        self.best_config: Candidate | None = None  # the choice of the last launch
        self._lock = threading.RLock()
        self._warned = False

    # launching --------------------------------------------------------------------------------
    def run(self, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> Any:
        nargs = {**dict(zip(self.arg_names, args, strict=False)), **kwargs}
        call = Call(args, {**kwargs, "grid": grid, "warmup": warmup}, nargs)
        if warmup:
            return self._warmup(call)
        key = call_key(self.arg_names, self.keys, self.launcher.constexprs(), nargs)
        with self._lock:
            choice = self.cache.get(key)
            if choice is None:
                choice = self.cache[key] = self._choose(key, call)
        self.best_config = choice
        return self.launcher.launch(choice, args, call.kwargs)

    def _warmup(self, call: Call) -> list[Any]:
        """Build every candidate and the reference (the default only, where nothing would be
        tuned)."""
        why_not = self._not_tuning()
        if why_not is None:
            todo = (REFERENCE, *(c for c in self.candidates if c != REFERENCE))
        else:
            self._warn_once(
                f"not tuning {self.launcher.name} ({why_not}); building {self.default.name}"
            )
            todo = (self.default,)
        built = []
        for candidate in todo:
            try:
                built.append(self.launcher.launch(candidate, call.args, call.kwargs))
            except Exception as e:
                self._warn(f"{candidate.name} did not build: {type(e).__name__}: {e}")
        return built

    def compile_only(
        self,
        signature: Mapping[str, str],
        constexprs: Mapping[str, Any] | None = None,
        target: str | int = "sm_90",
        **options: Any,
    ) -> list:
        """Every candidate built for ``target`` without a GPU, with ptxas's registers and
        spills per candidate (``autotuning.offline``); nothing is timed or chosen."""
        from .offline import compile_candidates

        return compile_candidates(
            self.fn,
            self.candidates,
            signature,
            constexprs,
            target,
            self.enable_options,
            **options,
        )

    # choosing ---------------------------------------------------------------------------------
    def _choose(self, key: tuple[str, ...], call: Call) -> Candidate:
        name = self.launcher.name
        why_not = self._not_tuning()
        if why_not is not None:
            self._warn_once(f"not tuning {name} ({why_not}); building {self.default.name}")
            return self._chose(
                TuningReport(name, list(key), self.default.name, tuned=False, note=why_not),
                self.default,
            )
        identity = self.launcher.identity()
        disk_key = None
        if self.cache_results:
            names = [c.name for c in self.candidates]
            disk_key = tunecache.key_for(identity, key, names, REFERENCE.name, self.enable_options)
            try:
                found = _stored(disk_key, name, key, names)
            except tunecache.BadChoice as e:  # a miss: tuned again and overwritten
                self._warn(f"{name} [{', '.join(key)}]: bad cached choice ({e}); tuning again")
                found = None
            if found is not None:
                return self._chose(*found)
        report, winner = self._tune(name, key, call, identity.get("device", ""))
        if disk_key is not None and report.tuned:
            tunecache.store(disk_key, report.to_dict())
        self.hooks.before(call.nargs, reset_only=True)  # the real launch sees reset arguments
        return self._chose(report, winner)

    def _tune(
        self, name: str, key: tuple[str, ...], call: Call, device: str
    ) -> tuple[TuningReport, Candidate]:
        start = time.perf_counter()
        kept = self._prune(call)
        tuning = Tuning(
            self.launcher,
            self.timer,
            kept,
            REFERENCE,
            call,
            self.hooks,
            self.outputs,
            self.tolerance,
            self.rounds,
            drop_behind=self.drop_behind,
            settle_rounds=self.settle_rounds,
        )
        report = TuningReport(name, list(key), "", device=device, reference=REFERENCE.name)
        report.rounds = self.rounds
        try:
            winner_name = tuning.run()
        except ReferenceFailed as e:
            self._warn(f"not tuning {name}: {e}; building {self.default.name}")
            report.winner, report.tuned, report.note = self.default.name, False, str(e)
            return report, self.default
        report.winner = winner_name
        # the rounds run: `rounds` rounded up to whole cycles of the distinct binaries
        report.rounds = max((len(o.ms) for o in tuning.outcomes.values()), default=0)
        report.candidates = [
            tuning.outcomes.get(c.name) or Outcome(c.name, status="pruned") for c in self.candidates
        ]
        report.compile_s = round(tuning.seconds["compile"], 3)
        report.check_s = round(tuning.seconds["check"], 3)
        report.bench_s = round(tuning.seconds["bench"], 3)
        report.total_s = round(time.perf_counter() - start, 3)
        lost = [c for c in report.candidates if c.status in ("discarded", "failed")]
        if lost:
            listed = "; ".join(f"{c.name} {c.status}: {c.reason}" for c in lost)
            self._warn(f"{name} [{', '.join(key)}]: {listed}")
        if not any(c.status in ("timed", "untimed") for c in report.candidates):
            report.note = f"no candidate agreed with the reference; using {REFERENCE.name}"
        by_name = {c.name: c for c in (*kept, REFERENCE)}
        return report, by_name[winner_name]

    def _prune(self, call: Call) -> tuple[Candidate, ...]:
        """``prune_configs_by`` over candidates: ``early_config_prune(candidates, nargs,
        **kwargs)``, then the ``top_k`` lowest ``perf_model(candidate=c, **nargs, **kwargs)``."""
        kept = list(self.candidates)
        kwargs = {k: v for k, v in call.kwargs.items() if k not in ("grid", "warmup")}
        early = self.prune_configs_by.get("early_config_prune")
        if early is not None:
            kept = list(early(kept, call.nargs, **kwargs))
            if not kept:
                raise ValueError("early_config_prune returned no candidate")
        model = self.prune_configs_by.get("perf_model")
        top_k = self.prune_configs_by.get("top_k", 1.0)
        if model is not None:
            count = int(len(kept) * top_k) if isinstance(top_k, float) else int(top_k)
            estimates = {c: model(candidate=c, **call.nargs) for c in kept}
            kept = sorted(kept, key=estimates.__getitem__)[: max(1, count)]
        return tuple(kept)

    def _not_tuning(self) -> str | None:
        if os.environ.get(SWITCH_ENV, "").strip().lower() in ("0", "false", "off", "no"):
            return f"tuning is turned off ({SWITCH_ENV}=0)"
        return self.launcher.unavailable()

    def _chose(self, report: TuningReport, candidate: Candidate) -> Candidate:
        with _reports_lock:
            _reports.append(report)
        if _printing():
            print(report.summary(), flush=True)
        return candidate

    def _warn_once(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            self._warn(message)

    def _warn(self, message: str) -> None:
        warnings.warn(f"ws_solver.triton.autotune: {message}", WSTuningWarning, stacklevel=4)


def _stored(
    disk_key: str, name: str, key: Sequence[str], names: Sequence[str]
) -> tuple[TuningReport, Candidate] | None:
    """The choice stored under ``disk_key`` for kernel ``name`` at ``key`` among the
    candidates ``names``; None for a miss; ``tunecache.BadChoice`` for a record that is not
    one (it is tuned again and overwritten)."""
    stored = tunecache.load(disk_key)
    if stored is None:
        return None
    report = tunecache.check(stored, name, key, names, REFERENCE.name)
    try:
        winner = parse(report.winner)
    except ValueError as e:
        raise tunecache.BadChoice(f"its winner does not name a candidate ({e})") from None
    report.cached = True
    return report, winner


def _printing() -> bool:
    """TRITON_PRINT_AUTOTUNING=1, as Triton reads it."""
    from triton import knobs

    return bool(knobs.autotuning.print)

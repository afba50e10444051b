"""What the drop-in is set to do and what it did: the strategies it accepts, `Settings`,
`CompileReport`, and the state of one enable() (`Session`)."""

from __future__ import annotations

import contextlib
import fnmatch
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ...core.candidates import measured_names
from ...core.options import check_flag, check_optional_seconds
from ...core.strategy import DROPIN_STRATEGIES, FALLBACK_ORDER, Explore, Strategy, parse_strategy
from ...pipeline import plancache
from ...pipeline.partition import SolveOptions
from ..guard import client as lguard
from ..rewrites import chain as rewrites
from . import reportlog

STRATEGIES = FALLBACK_ORDER  # the plans (enable() also takes stock, measured, explore:K)
# What to try, in order, for each strategy asked for: it, then the ones after it in
# FALLBACK_ORDER; Triton's unmodified stage comes last. Stock and measured build stock's
# kernel at compile time (measured chooses at the launch): nothing to fall back from.
FALLBACKS: dict[Strategy, tuple[Strategy, ...]] = {
    **{s: FALLBACK_ORDER[k:] for k, s in enumerate(FALLBACK_ORDER)},
    Strategy.STOCK: (),
    Strategy.MEASURED: (),
}


def fallbacks_for(strategy: Strategy | Explore) -> tuple[Strategy | Explore, ...]:
    """FALLBACKS, with "explore:K" (a plan of `ws-solver explore`) falling back as optimal."""
    if isinstance(strategy, Explore):
        return (strategy, *FALLBACKS[Strategy.OPTIMAL])
    return FALLBACKS[strategy]


STOCK = Strategy.STOCK  # strategy_used: Triton's own make_ttgir, as if ws_solver were off
# The default partitioning limit: margin + slack × the solver's limit per WS loop (wall s).
PARTITION_MARGIN_S = 60.0
PARTITION_SLACK = 4.0

_SOURCES_THAT_CHANGE_BINARIES = ("core", "ir", "model", "heuristic", "encode", "pipeline", "triton")


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
    # sm_90: after that release, the two warp groups take turns issuing their wgmmas, in
    # the PTX (pingpong.py).
    take_turns: bool = False
    # Wall seconds one partitioning attempt may take (None: derived from the solver's time
    # limit, see partition_limit). Not part of the digest, like lowering_timeout.
    partition_timeout: float | None = None
    # Optimal and heuristic: build stock Triton's kernel and ours to ptxas in the guard's
    # child, and keep the decision the compiler supports (decision_check.py).
    check_decision: bool = True
    # The decision check's builds side by side where cores allow: on a measured target stock's
    # kernel is built beside ours, used only where a rule asks (dropin/builds.py). Not part
    # of the digest: it changes no binary and no report.
    parallel_builds: bool = True
    # Kernels left to stock Triton (fnmatch patterns of kernel names): compiled by Triton's
    # own stage, reported as "stock" (skipped).
    skip: tuple[str, ...] = ()
    # A folder each compile's planner input, annotated TTGIR, plans and report go to
    # (dump.py); not part of the digest: it changes no binary.
    dump_dir: str | None = None
    # Measured mode's candidates (core.candidates' names; empty: MEASURED_CANDIDATES); not
    # part of the digest: they choose among binaries, the tuning cache keys them.
    candidates: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Bad values fail here, one line (ValueError), not as a fallback at compile time."""
        object.__setattr__(self, "strategy", parse_strategy(self.strategy, DROPIN_STRATEGIES))
        if not isinstance(self.solve, SolveOptions):
            raise ValueError(f"solve must be SolveOptions, got {self.solve!r}")
        flags = ("apply_registers", "overlap_wgmma", "release_per_warp_group", "take_turns")
        for name in (*flags, "check_decision", "parallel_builds"):
            check_flag(getattr(self, name), name)
        for name in ("lowering_timeout", "partition_timeout"):
            object.__setattr__(self, name, check_optional_seconds(getattr(self, name), name))
        object.__setattr__(self, "skip", check_patterns(self.skip, "skip"))
        if self.candidates:
            if self.strategy != Strategy.MEASURED:
                raise ValueError(
                    f"candidates are measured mode's; strategy {self.strategy} measures nothing"
                )
            try:
                names = measured_names(self.candidates)
            except ValueError as e:
                raise ValueError(f"candidates: {e}") from None
            object.__setattr__(self, "candidates", names)

    def skipped_by(self, kernel: str) -> str | None:
        """The first ``skip`` pattern that names ``kernel``, else None."""
        return next((p for p in self.skip if fnmatch.fnmatchcase(kernel, p)), None)

    def partition_limit(self, loops: int, strategy: Strategy | Explore = Strategy.OPTIMAL) -> float:
        """Wall seconds an attempt of ``strategy`` on a kernel with ``loops`` WS loops may
        take: ``partition_timeout``, else a margin over the solver's own (deterministic)
        limits, which a loaded machine can stretch (explore:K solves K + 1 times a loop)."""
        if self.partition_timeout is not None:
            return self.partition_timeout
        rounds = strategy.rank + 1 if isinstance(strategy, Explore) else 1
        solves = max(1, loops) * rounds
        return PARTITION_MARGIN_S + PARTITION_SLACK * self.solve.time_limit * solves

    def digest(self) -> str:
        """Names the binaries these settings produce (Triton's cache key does not)."""
        return plancache.digest(
            {
                "strategy": self.strategy,
                "solve": plancache.canonical(self.solve, skip=frozenset({"cache"})),
                "apply_registers": self.apply_registers,
                "overlap_wgmma": self.overlap_wgmma,
                "release_per_warp_group": self.release_per_warp_group,
                "take_turns": self.take_turns,
                "check_decision": self.check_decision,
                "code": plancache.code_version(_SOURCES_THAT_CHANGE_BINARIES),
                "hopper_fix": rewrites.hopper_fix() is not None,
                # Only when set: the folders of settings without it keep their names.
                **({"skip": list(self.skip)} if self.skip else {}),
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
    # The decision check (decision_check.py): stock's build, ours, the other, the rule.
    decision: dict = field(default_factory=dict)
    wall_s: float = 0.0
    # Where wall_s went, by phase (`timed`): "partition point" (Triton's passes up to the
    # planner's input), "planning" (every plan solved), "decision check" (its builds, less
    # the planning inside it); the rest is Triton's own lowering and ws_solver's rewrites.
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> CompileReport | None:
        """The report ``to_dict`` gave (as a binary's metadata holds it); None for anything
        else."""
        names = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in names})
        except TypeError:
            return None

    def summary(self) -> str:
        """For a person: the kernel, what was asked and built and why, a line per loop (its
        plan in one line), what fell back, the notes."""
        return "\n".join(summary_lines(self.to_dict()))

    def __str__(self) -> str:
        return self.summary()

    def log_line(self) -> str:
        """One line per compile (``WS_SOLVER_LOG=1``): kernel, decision, seconds."""
        return log_line(self.to_dict())


_timing = threading.local()
# Its own lock: a compile can hold `lock` while a build thread plans (and times) for it.
_seconds_lock = threading.Lock()


@contextlib.contextmanager
def timed(report: CompileReport | None, phase: str) -> Iterator[None]:
    """Add the seconds the block takes to ``report.seconds[phase]``, less those of the phases
    timed inside it on the same thread (each second is counted once)."""
    stack = _timing.__dict__.setdefault("stack", [])
    stack.append(0.0)
    start = time.perf_counter()
    try:
        yield
    finally:
        spent = time.perf_counter() - start
        inner = stack.pop()
        if stack:
            stack[-1] += spent
        if report is not None:
            with _seconds_lock:
                own = report.seconds.get(phase, 0.0) + spent - inner
                report.seconds[phase] = round(own, 4)


def _built(data: dict) -> str:
    used = str(data.get("strategy_used") or "?")
    return "stock Triton's own kernel" if used == STOCK else f"{used}'s kernel"


def summary_lines(data: dict) -> list[str]:
    """``CompileReport.summary()`` of a report's dictionary (as the compile log and a
    kernel's metadata hold it)."""
    head = (
        f"ws_solver: {data.get('kernel')} (sm_{data.get('capability')}): asked "
        f"{data.get('strategy_asked')}, built {_built(data)} in {data.get('wall_s', 0):.1f} s"
    )
    lines = [head]
    decision = data.get("decision") or {}
    if decision.get("rule"):
        lines.append(f"  decided by {decision['rule']}: {decision.get('evidence', '')}".rstrip())
    for loop in data.get("loops") or []:
        lines.append("  " + _loop_line(loop))
    for failed in data.get("fallbacks") or []:
        loops = ", ".join(f"loop {x.get('loop')}" for x in failed.get("loops") or [])
        lines.append(
            f"  fell back: {failed.get('strategy')} failed"
            + (f" on {loops}" if loops else "")
            + f": {failed.get('reason')}"
        )
    lines += [f"  note: {n}" for n in data.get("notes") or []]
    return lines


def _loop_line(loop: dict) -> str:
    where = loop.get("source") or (f"TTGIR line {loop['line']}" if loop.get("line") else "")
    head = f"loop {loop.get('loop')}" + (f" ({where})" if where else "")
    if loop.get("strategy") == STOCK:
        return f"{head}: as stock Triton builds it"
    if loop.get("strategy") == Strategy.TRITON:
        return f"{head}: Triton's own partition"
    parts = [p for p in loop.get("partitions") or [] if isinstance(p, dict)]
    if not loop.get("specialized"):
        return f"{head}: not specialized ({loop.get('reason', '')})"
    groups = " | ".join(
        f"{p.get('role')} {p.get('warps')} warps {p.get('registers')} regs" for p in parts
    )
    ii = loop.get("ii")
    modeled = f"; modeled II {ii} cycles" if ii else ""
    return f"{head}: {len(parts)} partitions: {groups}{modeled} ({loop.get('reason', '')})"


def log_line(data: dict) -> str:
    """``CompileReport.log_line()`` of a report's dictionary."""
    decision = data.get("decision") or {}
    rule = f", {decision['rule']}" if decision.get("rule") else ""
    fell = len(data.get("fallbacks") or [])
    fallbacks = f", {fell} fallback(s)" if fell else ""
    seconds = data.get("seconds") or {}
    where = ", ".join(f"{phase} {s:.2f}" for phase, s in seconds.items() if s >= 0.005)
    return (
        f"ws_solver: {data.get('kernel')} sm_{data.get('capability')}: "
        f"{data.get('strategy_asked')} -> {data.get('strategy_used')}{rule}{fallbacks}; "
        f"{data.get('wall_s', 0):.2f} s" + (f" ({where})" if where else "")
    )


NOTHING = object()  # Session.prev_knob when knobs.cache had no dir of its own
lock = threading.RLock()


@dataclass
class Session:
    settings: Settings
    cache_base: str | None
    cache_dir: str
    prev_hook: Any
    prev_knob: Any  # knobs.cache.__dict__["dir"] before enable(), or NOTHING
    prev_env: str | None  # $TRITON_CACHE_DIR before enable()
    prev_listener: Any = None  # triton.knobs.compilation.listener before enable()
    reports: list[CompileReport] = field(default_factory=list)
    active: bool = True
    warned: set[str] = field(default_factory=set)  # what warn_once warned of
    report_file: str | None = None  # the compile log (reportlog.py) every report goes to
    log_warned: bool = False

    def warn_once(self, kind: str, message: str) -> None:
        """Warn ``message`` (a WSFallbackWarning) the first time this session meets ``kind``."""
        with lock:
            if kind in self.warned:
                return
            self.warned.add(kind)
        warnings.warn(message, WSFallbackWarning, stacklevel=3)

    def log(self, report: CompileReport, triton_hash: str | None) -> None:
        """Append ``report`` to the compile log, if there is one; a failure warns once per
        session and never breaks the compile."""
        if self.report_file is None:
            return
        try:
            reportlog.append(self.report_file, reportlog.compile_record(report, triton_hash))
        except OSError as e:
            with lock:
                warned, self.log_warned = self.log_warned, True
            if not warned:
                warnings.warn(
                    f"ws_solver: cannot append to the compile log {self.report_file!r} ({e}); "
                    "reports go only to compile_reports()",
                    WSFallbackWarning,
                    stacklevel=3,
                )


def check_patterns(value: object, name: str) -> tuple[str, ...]:
    """Kernel-name patterns: a string or a sequence of non-empty strings (ValueError)."""
    items = (value,) if isinstance(value, str) else value
    try:
        patterns = tuple(items)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be kernel-name patterns, got {value!r}") from None
    for p in patterns:
        if not isinstance(p, str) or not p.strip():
            raise ValueError(f"{name} must be non-empty kernel-name patterns, got {p!r}")
    return tuple(p.strip() for p in patterns)

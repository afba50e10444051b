"""Choosing among candidate builds of one kernel call: check each against the reference, time
the distinct binaries in interleaved rounds, keep the fastest.

The procedure talks to the GPU only through a ``Launcher`` and a timer, so that it runs the
same with fakes on a CPU (tests) as with ``ws_solver.triton.autotuning.launcher`` on a GPU.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ...core.candidates import Candidate

# Relative error ‖out − ref‖₂ / ‖ref‖₂ a candidate's output may have against the reference's,
# per dtype: about twice the unit roundoff, since two schedules of one kernel may round a
# few elements differently (float32 allows for TF32 dots); other dtypes must match exactly.
TOLERANCE: dict[str, float] = {
    "float64": 1e-9,
    "float32": 1e-5,
    "float16": 2e-3,
    "bfloat16": 1.6e-2,
    "float8_e4m3fn": 0.25,
    "float8_e4m3fnuz": 0.25,
    "float8_e5m2": 0.5,
    "float8_e5m2fnuz": 0.5,
}
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")  # keyed like constexprs


def tolerance_for(dtype: Any, override: float | None = None) -> float:
    """The allowed relative error for outputs of ``dtype`` (0.0: bitwise equal)."""
    if override is not None:
        return override
    return TOLERANCE.get(str(dtype).removeprefix("torch."), 0.0)


class Launcher(Protocol):
    """What tuning needs from the machine (``launcher.TritonLauncher``)."""

    def launch(self, candidate: Candidate, args: tuple, kwargs: dict) -> Any:
        """Run the kernel as built for ``candidate`` (building it first if needed); returns
        the compiled kernel."""

    def describe(self, kernel: Any) -> dict:
        """``{"binary": hash or None, "strategy_used": str or None}`` of a compiled kernel."""

    def tensors(self, nargs: Mapping[str, Any]) -> dict[str, Any]:
        """The tensors the arguments hold, by argument name (a descriptor's base tensor)."""

    def snapshot(self, tensor: Any) -> Any: ...

    def differs(self, a: Any, b: Any) -> bool:
        """Whether two tensors differ in any bit."""

    def poison(self, tensor: Any) -> None:
        """Fill with NaN (or another value no kernel writes by accident)."""

    def disagreement(self, ref: Any, out: Any, tolerance: float | None) -> str | None:
        """Why ``out`` does not match ``ref`` (NaN matches NaN), or None when it does."""

    def synchronize(self) -> None: ...

    # what the autotuner asks besides (the kernel, the machine)
    name: str

    def unavailable(self) -> str | None:
        """Why nothing can be tuned here (no GPU); None when it can."""

    def identity(self) -> dict:
        """The kernel's ``name`` and ``source`` hash, the ``device`` name, the ``triton``
        version: what the on-disk choice is keyed by besides the call."""

    def constexprs(self) -> list[str]: ...

    def check_candidates(self, candidates: tuple[Candidate, ...]) -> None:
        """ValueError for candidates this kernel cannot be built as."""


Timer = Callable[[Callable[[], None]], float]  # runs a call repeatedly, returns ms per call


@dataclass
class Hooks:
    """Triton's ``reset_to_zero`` / ``restore_value`` (or the user's ``pre_hook`` /
    ``post_hook``) around every launch tuning makes."""

    reset_to_zero: Sequence[str] = ()
    restore_value: Sequence[str] = ()
    pre_hook: Callable[..., Any] | None = None
    post_hook: Callable[..., Any] | None = None
    _saved: dict = field(default_factory=dict)

    def before(self, nargs: Mapping[str, Any], reset_only: bool = False) -> None:
        if self.pre_hook is not None:
            self.pre_hook(nargs, reset_only)
            return
        for name in self.reset_to_zero:
            nargs[name].zero_()
        if not reset_only:
            self._saved = {name: nargs[name].clone() for name in self.restore_value}

    def after(self, nargs: Mapping[str, Any], exception: BaseException | None = None) -> None:
        if self.post_hook is not None:
            self.post_hook(nargs, exception)
            return
        for name in self.restore_value:
            nargs[name].copy_(self._saved[name])
        self._saved = {}

    def in_out(self) -> frozenset[str]:
        """Arguments the kernel reads as well as writes: never poisoned."""
        return frozenset(self.reset_to_zero) | frozenset(self.restore_value)

    def timing(self) -> None:
        """The checks are over; the timed launches follow (hooks that restore arguments
        around checks may let those run back to back)."""


@dataclass
class Call:
    """One kernel call: its arguments as given and by name."""

    args: tuple
    kwargs: dict
    nargs: dict  # argument name -> value, positional and keyword


@dataclass
class Outcome:
    """What happened to one candidate."""

    name: str
    status: str = "pending"  # timed, untimed, duplicate, discarded, failed, pruned, dropped
    binary: str | None = None
    same_as: str | None = None  # duplicate: the candidate with the same binary that was timed
    strategy_used: str | None = None  # what the drop-in compiled (after its fallbacks)
    reason: str = ""
    compile_s: float = 0.0  # the first launch, with the compile
    ms: list[float] = field(default_factory=list)  # one per round

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.ms) if self.ms else None


@dataclass
class TuningReport:
    """One tuning choice: the candidates, their times, what was discarded and the winner."""

    kernel: str
    key: list[str]
    winner: str
    device: str = ""
    reference: str = ""
    tuned: bool = True  # False: not tuned here (no GPU, tuning off); `note` says why
    cached: bool = False  # the choice came from the on-disk cache
    note: str = ""
    rounds: int = 0
    candidates: list[Outcome] = field(default_factory=list)
    compile_s: float = 0.0
    check_s: float = 0.0
    bench_s: float = 0.0
    total_s: float = 0.0
    extra_bytes: int = 0  # device memory tuning copied the arguments into (measured mode)

    def to_dict(self) -> dict:
        out = asdict(self)
        for entry, outcome in zip(out["candidates"], self.candidates, strict=True):
            entry["median_ms"] = outcome.median_ms
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TuningReport:
        fields = dict(data)
        outcomes = [
            Outcome(**{k: v for k, v in c.items() if k != "median_ms"})
            for c in fields.pop("candidates", [])
        ]
        return cls(**fields, candidates=outcomes)

    def outcome(self, name: str) -> Outcome | None:
        return next((c for c in self.candidates if c.name == name), None)

    def margin(self) -> tuple[float, bool] | None:
        """(how much faster the winner's median is than the next fastest timed candidate's,
        whether their rounds lie apart: the winner's slowest round beats the other's fastest);
        None with fewer than two timed candidates. A short tuning reads a ratio a few percent
        off a long one (docs/autotune.md), so a margin inside the rounds' spread is no verdict."""
        timed = {c.name: c.ms for c in self.candidates if c.status == "timed" and c.ms}
        if self.winner not in timed or len(timed) < 2:
            return None
        won = timed.pop(self.winner)
        runner_up = min(timed.values(), key=statistics.median)
        ratio = statistics.median(runner_up) / statistics.median(won) - 1
        return ratio, max(won) < min(runner_up)

    def summary(self) -> str:
        """One line, as printed under TRITON_PRINT_AUTOTUNING=1."""
        head = f"ws_solver autotune: {self.kernel} [{', '.join(self.key)}] -> {self.winner}"
        if not self.tuned:
            return f"{head} (not tuned: {self.note})"
        parts = []
        for c in self.candidates:
            if c.status == "timed":
                parts.append(f"{c.name} {c.median_ms:.4f} ms")
            elif c.status == "duplicate":
                parts.append(f"{c.name} = {c.same_as}")
            else:
                parts.append(f"{c.name} {c.status}")
        where = "from the cache" if self.cached else f"in {self.total_s:.1f} s"
        margin = self.margin()
        if margin is not None:
            ratio, apart = margin
            spread = "its rounds apart" if apart else "inside the rounds' spread"
            where += f", by {100 * ratio:.1f}% ({spread})"
        return f"{head} {where}: {'; '.join(parts)}"


# -- pure helpers -------------------------------------------------------------------------------
def describe_arg(value: Any) -> str:
    """How an argument enters the tuning key when it is not a key argument: a tensor by its
    dtype, a tensor descriptor by its dtype and block shape, anything else by its type."""
    base = getattr(value, "base", None)
    if base is not None and hasattr(value, "block_shape"):
        return f"desc<{_dtype(base)}{list(value.block_shape)}>"
    if hasattr(value, "dtype") and hasattr(value, "data_ptr"):
        return _dtype(value)
    return type(value).__name__


def _dtype(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def call_key(
    arg_names: Sequence[str], key: Sequence[str], constexprs: Sequence[str], nargs: Mapping
) -> tuple[str, ...]:
    """What a choice is remembered by: the ``key`` arguments' values, the constexpr and
    compile-option values of the call, and every other argument's dtype or type."""
    fixed = set(key) | set(constexprs) | set(OPTION_NAMES)
    out = [f"{name}={nargs[name]!r}" for name in key if name in nargs]
    out += [f"{name}={nargs[name]!r}" for name in (*constexprs, *OPTION_NAMES) if name in nargs]
    out += [f"{name}:{describe_arg(nargs[name])}" for name in arg_names if name not in fixed]
    return tuple(out)


def same_binaries(binaries: Mapping[str, str | None]) -> dict[str, str]:
    """Each name -> the first name (in order) built into the same binary (itself if none is;
    an unknown binary matches nothing)."""
    first: dict[str, str] = {}
    out = {}
    for name, binary in binaries.items():
        out[name] = first.setdefault(binary, name) if binary else name
    return out


def round_orders(names: Sequence[str], rounds: int) -> list[list[str]]:
    """The order of each timing round: each round starts one candidate later, so that no
    candidate always runs first (after the others warmed the GPU) or last."""
    n = len(names)
    return [[names[(r + i) % n] for i in range(n)] for r in range(rounds)] if n else []


def balanced_rounds(rounds: int, entries: int) -> int:
    """``rounds`` rounded up to a multiple of ``entries``: in ``round_orders`` each entry then
    takes every place in the order equally often. (The H200's order effect: in one place of
    three, stock / ws_solver read 1.150 against 1.134-1.137 in the other two,
    2026-12-02-triton39-h200-rotated.)"""
    return -(-rounds // entries) * entries if entries else rounds


def balanced_orders(names: Sequence[str], rounds: int) -> list[list[str]]:
    """``round_orders`` for at least ``rounds`` rounds, rounded up to whole cycles of the
    order (``balanced_rounds``)."""
    return round_orders(names, balanced_rounds(rounds, len(names)))


def fastest(times: Mapping[str, Sequence[float]]) -> str:
    """The name with the lowest median time; equal medians go to the earlier name."""
    best, best_ms = "", math.inf
    for name, ms in times.items():
        med = statistics.median(ms) if ms else math.inf
        if med < best_ms:
            best, best_ms = name, med
    if not best:
        raise ValueError("no candidate has a time")
    return best


def time_rounds(
    timer: Timer, calls: Mapping[str, Callable[[], None]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Time each call once per round, in ``round_orders``, ``rounds`` rounded up to whole
    cycles of the order (``balanced_rounds``); (ms per round by name, the first error of
    each call that raised: it is not timed again)."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    errors: dict[str, str] = {}
    for order in balanced_orders(list(calls), rounds):
        for name in order:
            if name not in errors:
                time_once(timer, calls, name, times, errors)
    return times, errors


def time_once(
    timer: Timer,
    calls: Mapping[str, Callable[[], None]],
    name: str,
    times: dict[str, list[float]],
    errors: dict[str, str],
) -> bool:
    """One more time of ``name`` in ``times``; False (its first error in ``errors``, its times
    dropped) when it raised."""
    try:
        times[name].append(timer(calls[name]))
    except Exception as e:
        errors[name] = first_line(e)
        times.pop(name)
        return False
    return True


def close_call(times: Mapping[str, Sequence[float]], within: float) -> tuple[str, str] | None:
    """The two fastest names by median when they are closer than ``within`` (a fraction of the
    faster's median) and their rounds overlap (neither's slowest beats the other's fastest):
    a call the rounds have not yet made; None otherwise."""
    ranked = sorted((n for n in times if times[n]), key=lambda n: statistics.median(times[n]))
    if len(ranked) < 2:
        return None
    a, b = ranked[0], ranked[1]
    ta, tb = times[a], times[b]
    if statistics.median(tb) > statistics.median(ta) * (1 + within):
        return None
    if max(ta) < min(tb) or max(tb) < min(ta):
        return None
    return a, b


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln for ln in text.splitlines() if "error:" in ln] or text.splitlines() or [""]
    return f"{type(e).__name__}: {lines[0].strip()[:300]}".rstrip(": ")


# -- the procedure -------------------------------------------------------------------------------
DROP_ABOVE = 3  # distinct binaries a tuning times in full rounds before a first round drops some
CLOSE = 0.03  # two fastest this close, their rounds overlapping: a close call (close_call)


class ReferenceFailed(RuntimeError):
    """The reference build failed, so no candidate can be checked."""


@dataclass
class Tuning:
    """One tuning run over one call; ``run()`` fills ``outcomes`` and returns the winner."""

    launcher: Launcher
    timer: Timer
    candidates: Sequence[Candidate]
    reference: Candidate
    call: Call
    hooks: Hooks
    outputs: Sequence[str] | None = None  # None: the tensors the reference's run changes
    tolerance: float | None = None
    rounds: int = 3
    # With more than DROP_ABOVE distinct binaries to time: a first round drops those this
    # fraction slower than its fastest (None: every one takes every round).
    drop_behind: float | None = None
    # Extra rounds of the two fastest, at most, while they are a close call (`close_call`):
    # the fixed rounds' medians a few percent apart can rank them either way (measured mode
    # kept a 6% slower binary on 3 of 165 H100 configs, 2026-12-07-measured-candidates-h100).
    settle_rounds: int = 0
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # compile, check, bench
    reference_s: float = 0.0  # the reference's first launch, with its compile

    def run(self) -> str:
        """Check every candidate against the reference, time the distinct binaries that
        agree, and return the fastest one's name (the reference's when none agrees)."""
        self.outcomes = {c.name: Outcome(c.name) for c in self.candidates}
        start = time.perf_counter()
        reference_out = self._reference()
        built = time.perf_counter()
        for candidate in self.candidates:
            self._check(candidate, reference_out)
        checked = time.perf_counter()
        winner = self._time()
        self.seconds = {
            "compile": built - start,
            "check": checked - built,
            "bench": time.perf_counter() - checked,
        }
        return winner

    def _reference(self) -> dict[str, Any]:
        """Build and run the reference, find the outputs (unless given: the tensors its run
        changed), run it again on poisoned outputs and return what it wrote."""
        tensors = self.launcher.tensors(self.call.nargs)
        before = None
        if self.outputs is None:
            before = {name: self.launcher.snapshot(t) for name, t in tensors.items()}
        try:
            start = time.perf_counter()
            self._run(self.reference, poison=False)
            self.reference_s = time.perf_counter() - start
            if before is not None:
                self.outputs = [
                    n for n, t in tensors.items() if self.launcher.differs(before[n], t)
                ]
            del before
            _, outputs = self._run(self.reference, poison=True)
        except Exception as e:
            raise ReferenceFailed(f"reference {self.reference.name}: {first_line(e)}") from e
        for name, out in outputs.items():
            if name not in self.hooks.in_out() and self._all_poison(out):
                raise ReferenceFailed(
                    f"reference {self.reference.name} left {name} all poison (NaN): the kernel "
                    "reads it or does not write it; name an in-out argument in restore_value"
                )
        return outputs

    def _all_poison(self, tensor: Any) -> bool:
        poisoned = self.launcher.snapshot(tensor)
        self.launcher.poison(poisoned)
        return not self.launcher.differs(tensor, poisoned)

    def _check(self, candidate: Candidate, reference_out: dict[str, Any]) -> None:
        outcome = self.outcomes[candidate.name]
        start = time.perf_counter()
        try:
            kernel, out = self._run(candidate, poison=True)
        except Exception as e:
            outcome.status, outcome.reason = "failed", first_line(e)
            return
        outcome.compile_s = round(
            self.reference_s if candidate == self.reference else time.perf_counter() - start, 4
        )
        info = self.launcher.describe(kernel)
        outcome.binary, outcome.strategy_used = info.get("binary"), info.get("strategy_used")
        for name, ref in reference_out.items():
            why = self.launcher.disagreement(ref, out[name], self.tolerance)
            if why:
                outcome.status, outcome.reason = "discarded", f"{name}: {why}"
                return
        outcome.status = "checked"

    def _run(self, candidate: Candidate, poison: bool) -> tuple[Any, dict[str, Any]]:
        """One launch between the hooks; with ``poison``, the outputs are poisoned first and
        returned after (copies)."""
        nargs = self.call.nargs
        tensors = self.launcher.tensors(nargs) if poison else {}
        outputs = list(self.outputs or ()) if poison else []
        in_out = self.hooks.in_out()
        self.hooks.before(nargs)
        try:
            for name in outputs:
                if name not in in_out:
                    self.launcher.poison(tensors[name])
            kernel = self.launcher.launch(candidate, self.call.args, self.call.kwargs)
            self.launcher.synchronize()
            out = {name: self.launcher.snapshot(tensors[name]) for name in outputs}
        except BaseException as e:
            self.hooks.after(nargs, e)
            raise
        self.hooks.after(nargs)
        return kernel, out

    def _timed_call(self, candidate: Candidate) -> Callable[[], None]:
        nargs, args, kwargs = self.call.nargs, self.call.args, self.call.kwargs

        def call() -> None:
            self.hooks.before(nargs)
            try:
                self.launcher.launch(candidate, args, kwargs)
            except BaseException as e:
                self.hooks.after(nargs, e)
                raise
            self.hooks.after(nargs)

        return call

    def _time(self) -> str:
        """Time each distinct binary that passed, in interleaved rounds; the fastest wins."""
        passed = {n: o for n, o in self.outcomes.items() if o.status == "checked"}
        groups = same_binaries({n: o.binary for n, o in passed.items()})
        for name, first in groups.items():
            if first != name:
                passed[name].status, passed[name].same_as = "duplicate", first
        distinct = [n for n in passed if groups[n] == n]
        if not distinct:
            return self.reference.name
        if len(distinct) == 1:
            passed[distinct[0]].status = "untimed"
            return distinct[0]
        by_name = {c.name: c for c in self.candidates}
        calls = {name: self._timed_call(by_name[name]) for name in distinct}
        self.hooks.timing()
        if self.drop_behind is not None and len(calls) > DROP_ABOVE:
            calls = self._first_round(calls, passed)
        times, errors = time_rounds(self.timer, calls, self.rounds)
        self._settle(calls, times, errors)
        for name in calls:
            passed[name].ms = times.get(name, [])
            if name in errors:
                passed[name].status, passed[name].reason = "failed", errors[name]
        timed = {n: passed[n].ms for n in calls if passed[n].status != "failed"}
        for name in timed:
            passed[name].status = "timed"
        return fastest(timed) if timed else self.reference.name

    def _settle(
        self,
        calls: dict[str, Callable[[], None]],
        times: dict[str, list[float]],
        errors: dict[str, str],
    ) -> None:
        """While the two fastest are a close call, time both again (in turn, each first every
        other time), up to ``settle_rounds`` extra rounds each."""
        for extra in range(self.settle_rounds):
            pair = close_call(times, CLOSE)
            if pair is None:
                return
            for name in pair if extra % 2 else pair[::-1]:
                if not time_once(self.timer, calls, name, times, errors):
                    return

    def _first_round(
        self, calls: dict[str, Callable[[], None]], passed: dict[str, Outcome]
    ) -> dict[str, Callable[[], None]]:
        """Each call timed once; the ones more than ``drop_behind`` slower than the fastest
        are dropped (their one time kept), so the rounds time few candidates however many
        were asked for (each round times every candidate: the cost is quadratic)."""
        first: dict[str, float] = {}
        for name, call in calls.items():
            try:
                first[name] = self.timer(call)
            except Exception as e:
                passed[name].status, passed[name].reason = "failed", first_line(e)
        if not first:
            return {}
        assert self.drop_behind is not None
        best = min(first.values())
        kept = {}
        for name, ms in first.items():
            if ms <= best * (1 + self.drop_behind):
                kept[name] = calls[name]
                continue
            outcome = passed[name]
            outcome.status, outcome.ms = "dropped", [ms]
            outcome.reason = f"{100 * (ms / best - 1):.0f}% behind the fastest in a first round"
        return kept

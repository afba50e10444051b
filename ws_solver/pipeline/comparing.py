"""`compare`: heuristic vs optimal on every warp-specialized loop of some TTGIR files or
texts, one backend task per loop, gathered into the comparison document (`comparison`).

A file or loop that fails becomes a failure record (with the exit status `ws-solver compare`
gives it) and the others still run. `compare(...)` is `ws_solver.compare`; `compare_on` is
the same on a backend already open, with the hooks the command uses (messages, progress).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..backends import check_backend, open_backend
from ..core.failures import (
    EXIT_BAD_INPUT,
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SOME_FAILED,
    ReportedError,
    internal_failure,
)
from ..core.options import DEFAULT_WORKERS, SOLVE_THREADS, check_optional_name, check_source
from ..core.strategy import Strategy
from ..core.wording import count
from ..model.dfg import build_graph
from ..model.graph import LoopGraph
from ..model.lowering_facts import DEFAULT_TRITON, lowering_facts
from ..model.target import Target
from .comparison import attach_stock, compare_document, compare_loop, failure_record
from .inputs import (
    loop_place,
    module_target,
    parse_module,
    plan_failure,
    read_module,
    require_ws_loops,
    ttgir_under,
)
from .partition import SolveOptions
from .stock import StockDecision, recorded

Say = Callable[[str], None]


@dataclass(frozen=True)
class TtgirText:
    """A TTGIR module given as text; `name` stands for its file in the document."""

    name: str
    text: str


@dataclass(frozen=True)
class Task:
    """One loop to compare (sent to a worker process as it is: graph and all)."""

    file: str
    graph: LoopGraph
    target: Target  # with the Triton release whose lowering rules the plans follow
    options: SolveOptions

    @property
    def loop(self) -> int:
        return self.graph.loop_index


@dataclass
class CompareResult:
    document: dict
    exit_status: int


def _quiet(message: str) -> None:
    pass


def compare(
    sources: str | os.PathLike | Sequence[str | os.PathLike],
    target: str | None = None,
    time_limit: float = 2.0,
    workers: int = DEFAULT_WORKERS,
    seed: int = 0,
    cache: bool = False,
    backend: Any = None,
    triton: str | None = None,
) -> dict:
    """Heuristic vs optimal on every warp-specialized loop of TTGIR files, folders (searched
    for *.ttgir) or texts, as the `ws-solver compare --json` document (its part outside
    `timing` is deterministic for a given seed); `backend`: a `ws_solver.backends.Backend`
    to run the loops on (default: this process); `triton`: whose lowering rules the plans
    follow (None: 3.6.0). Failures are in the document's `failures`."""
    items = _sources(sources)
    check_optional_name(target, "target")
    check_optional_name(triton, "triton")
    backend = check_backend(backend)
    # Deterministic time only, as `ws-solver compare` bounds it: the document must repeat.
    options = SolveOptions(
        time_limit=time_limit, workers=workers, seed=seed, cache=cache, wall_clock=False
    )
    version = lowering_facts(triton or DEFAULT_TRITON).version
    inputs, failures = _inputs(items)
    if backend is not None and not isinstance(backend, str):
        return compare_on(backend, inputs, options, version, target, failures).document
    with open_backend(backend or "local", 1) as opened:
        return compare_on(opened, inputs, options, version, target, failures).document


def _sources(sources: Any) -> list[str | os.PathLike]:
    """``compare``'s ``sources`` as a list, each checked (``check_source``): one path or
    text, or a list or tuple of them; TypeError naming the argument otherwise."""
    if isinstance(sources, str | os.PathLike):
        return [check_source(sources, "sources")]
    if not isinstance(sources, list | tuple):
        raise TypeError(
            f"sources must be a path, TTGIR text or a list of them, not {type(sources).__name__}"
        )
    return [check_source(item, f"sources[{n}]") for n, item in enumerate(sources)]


def _is_text(item: object) -> bool:
    return isinstance(item, str) and "\n" in item


def _inputs(items: list) -> tuple[list[Path | TtgirText], list[dict]]:
    """`compare`'s sources as `compare_on` takes them (texts named "<text>", or "<text N>"
    when there are several), and the failures of the paths that name no TTGIR file."""
    texts = [item for item in items if _is_text(item)]
    files, failures = collect_files([os.fspath(item) for item in items if not _is_text(item)])
    names = ["<text>"] if len(texts) == 1 else [f"<text {n}>" for n in range(len(texts))]
    given = [TtgirText(name, text) for name, text in zip(names, texts, strict=True)]
    return given + files, failures


def collect_files(paths, say: Say = _quiet) -> tuple[list[Path], list[dict]]:
    """The TTGIR files under `paths` (folders: recursively, sorted), and a failure record
    for each path that does not exist or holds no TTGIR file, and for each folder entry
    skipped (a dangling link, a FIFO...), each also told to `say`."""
    found: dict[Path, None] = {}
    failures = []
    for arg in paths:
        try:
            named, skipped = ttgir_under(arg)
        except ReportedError as e:
            named, skipped = [], [(arg, e.message)]
        found.update(dict.fromkeys(named))
        for file, message in skipped:
            failures.append(failure_record(str(file), message, "bad_input", EXIT_BAD_INPUT))
            say(message)
    return list(found), failures


def compare_on(
    backend: Any,
    inputs: Sequence[Path | TtgirText],
    options: SolveOptions,
    triton: str,
    target: str | None = None,
    failures: Sequence[dict] = (),
    *,
    say: Say = _quiet,
    progress: Callable[[int], AbstractContextManager] | None = None,
    jobs: int | None = None,
    retries: int = 2,
) -> CompareResult:
    """Compare every loop of `inputs` (files, or `TtgirText`) on `backend` (a
    `ws_solver.backends.Backend` already open), planning for `target` (None: each module's)
    under Triton `triton`'s lowering rules; `failures`: those found collecting the inputs.
    Each failure is told to `say` as it happens; `progress(total)` gives a context whose
    `advance(outcome)` is called as each loop finishes."""
    start = time.perf_counter()
    failures = list(failures)
    tasks: list[Task] = []
    stock: dict[str, StockDecision | None] = {}
    for source in inputs:
        found, failed = _loop_tasks(source, options, triton, target)
        for failure in failed:
            failures.append(failure)
            say(failure["message"])
        if found is not None:
            stock[found[0]] = found[1]
            tasks += found[2]
    records, timings = [], []
    with progress(len(tasks)) if progress else nullcontext() as bar:

        def collect(result: Any) -> None:
            outcome = task_outcome(tasks[result.index], result)
            if outcome["failure"] is not None:
                failures.append(outcome["failure"])
                say(outcome["failure"]["message"])
            else:
                records.append(outcome["record"])
                timings.append(outcome["timing"])
            if bar is not None:
                bar.advance(outcome)

        backend.map(solve_task, tasks, progress=collect, retries=retries, cpus=SOLVE_THREADS)
    attach_stock(records, stock)
    settings = {
        "time_limit": options.time_limit,
        "workers": options.workers,
        "seed": options.seed,
        "cache": options.cache,
        "triton": triton,
    }
    document = compare_document(
        settings,
        records,
        failures,
        timings,
        files=len(inputs),
        jobs=jobs or max(1, backend.stats.slots),
        total_wall_s=time.perf_counter() - start,
    )
    document["timing"]["backend"] = backend.stats.to_dict()
    return CompareResult(document, exit_status(records, failures))


def _loop_tasks(source: Path | TtgirText, options: SolveOptions, triton: str, target):
    """(file, stock's decision, the loops' tasks) of one input, or None when it does not
    read; and the failures met (the input's, or each loop's whose graph does not build)."""
    name = source.name if isinstance(source, TtgirText) else str(source)
    try:
        if isinstance(source, TtgirText):
            module = parse_module(name, source.text)
        else:
            module = read_module(source)
        loops = require_ws_loops(name, module)
        tgt = module_target(name, module, target, triton)
    except ReportedError as e:
        return None, [failure_record(name, e.message, "bad_input", e.code)]
    decision = None if isinstance(source, TtgirText) else recorded(source, module.text)
    tasks, failures = [], []
    for loop in loops:  # each loop's graph is built here, once, and sent to its worker
        try:
            graph = build_graph(module, loop)
        except Exception as e:
            where = loop_place(name, loop.kernel, loop.index, loop.op.line)
            message = f"{where}: internal error: {type(e).__name__}: {e}"
            failures.append(
                failure_record(name, message, "internal", EXIT_INTERNAL, None, loop.index, None)
            )
            continue
        tasks.append(Task(name, graph, tgt, options))
    return (name, decision, tasks), failures


def exit_status(records: list, failures: list) -> int:
    """0 when nothing failed; the failures' one status when nothing was compared and they
    agree; else 1 (some failed)."""
    if not failures:
        return EXIT_OK
    codes = {f["exit_status"] for f in failures}
    if not records and len(codes) == 1:
        return codes.pop()
    return EXIT_SOME_FAILED


def task_outcome(task: Task, result: Any) -> dict:
    """What a backend brought back for `task`: its outcome, or, when every attempt failed
    (the worker died, or the task raised), a failure record with the last reason."""
    if result.ok:
        return result.value
    graph = task.graph
    where = loop_place(task.file, graph.kernel, graph.loop_index, graph.line)
    message = f"{where}: failed after {count(result.attempts, 'attempt')}: {result.error}"
    return _failed(task, graph.kernel, graph.line, message, "internal", EXIT_INTERNAL)


def solve_task(task: Task) -> dict:
    """Compare one loop (runs in a worker process): {"record", "timing", "failure"}."""
    graph, target = task.graph, task.target
    where = loop_place(task.file, graph.kernel, graph.loop_index, graph.line)
    try:
        result = compare_loop(task.file, graph, target, task.options)
        failure = plan_failure(
            result.optimal, result.optimal_details, graph, target, Strategy.OPTIMAL
        )
    except Exception as e:
        error = internal_failure(where, e)
        kind = "internal" if error.code == EXIT_INTERNAL else "resource"
        return _failed(task, None, None, error.message, kind, error.code)
    if failure is not None:
        kind = "infeasible" if failure.code == EXIT_INFEASIBLE else "timeout"
        message = f"{where}: {failure.message}"
        return _failed(task, graph.kernel, graph.line, message, kind, failure.code)
    return {"record": result.record, "timing": result.timing, "failure": None}


def _failed(task: Task, kernel, line, message: str, kind: str, code: int) -> dict:
    failure = failure_record(task.file, message, kind, code, kernel, task.loop, line)
    return {"record": None, "timing": None, "failure": failure}

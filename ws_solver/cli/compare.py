"""`ws-solver compare`: heuristic and optimal plans side by side for every warp-specialized
loop under the given paths."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..backends import Backend, TaskResult
from ..core.options import SURVEY_TIME_LIMIT
from ..core.strategy import Strategy
from ..model import LoopGraph, Target, build_graph, target_for
from ..pipeline.comparison import attach_stock, compare_document, compare_loop, failure_record
from ..pipeline.stock import StockDecision, recorded
from ..report import compare as cmp
from .backend_options import BACKEND_HELP, add_backend_arguments, backend_from_args
from .common import (
    DETERMINISTIC_HELP,
    EXIT_BAD_INPUT,
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_TIMEOUT,
    CliError,
    add_command,
    add_solver_arguments,
    add_triton_argument,
    check_distinct,
    check_output,
    exit_status_epilog,
    internal_failure,
    loop_place,
    module_target,
    plan_failure,
    read_module,
    report,
    report_plan_cache,
    require_ws_loops,
    solve_options,
    triton_version,
    write_output,
)
from .files import ttgir_under

DESCRIPTION = """\
For every loop marked tt.warp_specialize in the given TTGIR files (folders are searched
recursively for *.ttgir), plan the loop with the heuristic and with the optimal strategy
(CP-SAT warm-started from the heuristic) and compare them: modeled II of each, the solver's
bound, gap and status, wall time, partitions, warps, registers, channels, shared memory,
and which heuristic decisions the optimum overrode (merges it split, naming the heuristic
rule; edges the heuristic left crossing that it joined; the decision to specialize). The
summary gives the loops where optimal is strictly better and by how much, the share proven
optimal, and wall-time percentiles.

The stock column is the decision stock Triton makes for the loop (WS: warp-specialized, no
WS, fails: stock does not compile the kernel), as recorded with the corpus dumps (their
index.json: Triton version, target, and the dump's SHA-256); "≠" marks a loop where
ws_solver's decision (the optimal strategy's plan, before the drop-in's compile-time check)
differs, and the summary counts them. A file without such a record (a TTGIR of your own, or
an edited dump) says "unknown": stock's decision is not guessed.

Without --report or --json the table and summary go to stdout. Progress goes to stderr: a
progress bar on a terminal, one line per loop otherwise. Loops run in parallel with --jobs,
in local processes or as Ray tasks (--backend; each solve uses --workers CP-SAT workers):
the results are the same for any --jobs and either backend, since the time limit is in
deterministic seconds and the seed is fixed; only the "timing" section of the JSON differs.
A file or loop that fails is reported and the others still run; no output file is written
before the end. The JSON schema is in docs/json-schemas.md ("compare --json")."""

EPILOG = f"""\
examples:
  ws-solver compare corpus/ttgir --jobs 2 --time-limit 2 --report compare.html
  ws-solver compare corpus/ttgir/gemm_persistent* --json compare.json --report compare.md
  ws-solver compare corpus/ttgir --backend ray --ray-address HEAD:6379 --json compare.json

{BACKEND_HELP}

{
    exit_status_epilog(
        EXIT_OK, EXIT_SOME_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INFEASIBLE, EXIT_TIMEOUT
    )
}
  (2, 3, 4 or 5 only when every input failed the same way; mixed failures give 1)"""

REPORT_FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "compare",
        "heuristic vs optimal for every warp-specialized loop under the given paths",
        DESCRIPTION,
        EPILOG,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="TTGIR files or folders")
    add_backend_arguments(parser, "loops")
    add_solver_arguments(
        parser, time_limit=SURVEY_TIME_LIMIT, cache=False, clock_help=DETERMINISTIC_HELP
    )
    add_triton_argument(parser)
    parser.add_argument(
        "--report",
        metavar="R.md|R.html",
        help="write the report as Markdown or as self-contained HTML with plots",
    )
    parser.add_argument("--json", metavar="R.json", help="write the comparison as JSON")
    parser.add_argument(
        "--triton-plan",
        action="store_true",
        help="a third column: the plan of Triton's own partition scheduler (the seed, PR "
        "#7312; needs Triton 3.7+), its modeled II and whether it partitions the loop as "
        "the heuristic's plan does (the plan the heuristic builds, before it may decline "
        "to specialize)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on stderr (errors still)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    report_format = check_report_path(args.report)
    for out in (args.report, args.json):
        check_output(out)
    outputs = (args.report, args.json)
    triton = seed_version() if getattr(args, "triton_plan", False) else None
    result = run_compare(args.paths, args, progress=not args.quiet, outputs=outputs)
    document = result.document
    if triton is not None:
        add_seed_column(document, triton)
    if not document["loops"] and document["failures"]:
        return result.exit_status  # nothing compared: each failure was reported; no files
    if args.json:
        write_output(cmp.to_json(document), args.json)
    if args.report:
        write_output(render_report(document, report_format), args.report)
    if args.json or args.report:
        lines = cmp.summary_lines(document)
        lines += [f"wrote {p}" for p in (args.json, args.report) if p]
        write_output("\n".join(lines) + "\n", None)
    else:
        write_output(cmp.to_text(document), None)
    return result.exit_status


def seed_version() -> str | None:
    """The installed Triton if its scheduler is the seed's; else None, said in one line."""
    from ..research.seed_plan import SeedUnavailable, installed_version

    try:
        return installed_version()
    except SeedUnavailable as e:
        report(f"--triton-plan: {e}; no seed column")
        return None


def add_seed_column(document: dict, triton: str) -> None:
    """Put Triton's own plan beside the heuristic's in each loop record (`"seed"`), and its
    summary in the document."""
    from ..heuristic import decide
    from ..pipeline.agreement import seed_summary, side_by_side
    from ..research.seed_plan import seed_plans

    by_file: dict[str, list[dict]] = {}
    for r in document["loops"]:
        by_file.setdefault(r["file"], []).append(r)
    for file, records in by_file.items():
        target = target_for(records[0]["target"], document["settings"]["triton"])
        try:
            found = seed_plans(Path(file).read_text(), target)
        except Exception as e:  # the seed column never fails the comparison
            message = f"{file}: Triton's scheduler: {type(e).__name__}: {e}"
            report(message)
            for r in records:
                r["seed"] = {"error": message}
            continue
        loops = {graph.loop_index: (graph, seed, loop) for graph, seed, loop in found}
        for r in records:
            graph, seed, loop = loops[r["loop"]]
            built, _ = decide(graph, target, force=True)
            r["seed"] = {**side_by_side(graph, target, built, seed), "rules": list(loop.rules)}
    document["seed"] = seed_summary(document["loops"], triton)


def render_report(document: dict, report_format: str) -> str:
    if report_format == "html":
        from ..report.plots import render_plots

        return cmp.to_html(document, render_plots(document))
    return cmp.to_markdown(document)


def check_report_path(path: str | None) -> str | None:
    if path is None:
        return None
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise CliError(f"{path}: --report must end in .md or .html")
    return REPORT_FORMATS[suffix]


# -- the run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One loop to compare (sent to a worker process as it is: graph and all)."""

    file: str
    graph: LoopGraph
    target: Target  # with the Triton release whose lowering rules the plans follow
    options: object  # pipeline.SolveOptions

    @property
    def loop(self) -> int:
        return self.graph.loop_index


@dataclass
class CompareResult:
    document: dict
    exit_status: int


def run_compare(
    paths, args, progress: bool = True, target: str | None = None, outputs=()
) -> CompareResult:
    """Collect the loops under `paths`, compare each on the backend `args` asks for (local
    processes by default, see `backend_from_args`), and return the document and the exit
    status. `args` carries jobs, time_limit, workers, seed, cache (and backend, ray_address,
    retries); `outputs` are files to be written, which must not be among the inputs."""
    import ws_solver

    with backend_from_args(args, ship=(ws_solver,)) as backend:
        return compare_on(backend, paths, args, progress, target, outputs)


def compare_on(
    backend: Backend, paths, args, progress: bool = True, target: str | None = None, outputs=()
) -> CompareResult:
    """`run_compare` on a backend already open."""
    start = time.perf_counter()
    options = solve_options(args, wall_clock=False)
    triton = triton_version(args)
    files, failures = collect_files(paths)
    check_distinct(files, outputs)
    tasks: list[Task] = []
    stock: dict[str, StockDecision | None] = {}
    for path in files:
        try:
            module = read_module(path)
            loops = require_ws_loops(path, module)
            tgt = module_target(path, module, target, triton)
        except CliError as e:
            failures.append(failure_record(str(path), e.message, "bad_input", e.code))
            report(e.message)
            continue
        stock[str(path)] = recorded(path, module.text)
        for loop in loops:  # each loop's graph is built here, once, and sent to its worker
            try:
                graph = build_graph(module, loop)
            except Exception as e:
                where = loop_place(str(path), loop.kernel, loop.index, loop.op.line)
                message = f"{where}: internal error: {type(e).__name__}: {e}"
                failures.append(
                    failure_record(
                        str(path), message, "internal", EXIT_INTERNAL, None, loop.index, None
                    )
                )
                report(message)
                continue
            tasks.append(Task(str(path), graph, tgt, options))
    records, timings = [], []
    with Progress(len(tasks), enabled=progress) as bar:

        def collect(result: TaskResult) -> None:
            outcome = task_outcome(tasks[result.index], result)
            if outcome["failure"] is not None:
                failures.append(outcome["failure"])
                report(outcome["failure"]["message"])
            else:
                records.append(outcome["record"])
                timings.append(outcome["timing"])
            bar.advance(outcome)

        backend.map(
            solve_task,
            tasks,
            progress=collect,
            retries=getattr(args, "retries", 2),
            cpus=options.workers,
        )
    report_plan_cache(options)
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
        files=len(files),
        jobs=args.jobs or max(1, backend.stats.slots),
        total_wall_s=time.perf_counter() - start,
    )
    document["timing"]["backend"] = backend.stats.to_dict()
    return CompareResult(document, exit_status(records, failures))


def exit_status(records: list, failures: list) -> int:
    if not failures:
        return EXIT_OK
    codes = {f["exit_status"] for f in failures}
    if not records and len(codes) == 1:
        return codes.pop()
    return EXIT_SOME_FAILED


def collect_files(paths) -> tuple[list[Path], list[dict]]:
    """The TTGIR files under `paths` (folders: recursively, sorted), and a failure record
    for each path that does not exist or holds no TTGIR file, and for each folder entry
    skipped (a dangling link, a FIFO...)."""
    found: dict[Path, None] = {}
    failures = []
    for arg in paths:
        try:
            named, skipped = ttgir_under(arg)
        except CliError as e:
            named, skipped = [], [(arg, e.message)]
        found.update(dict.fromkeys(named))
        for file, message in skipped:
            failures.append(failure_record(str(file), message, "bad_input", EXIT_BAD_INPUT))
            report(message)
    return list(found), failures


def task_outcome(task: Task, result: TaskResult) -> dict:
    """What a backend brought back for `task`: its outcome, or, when every attempt failed
    (the worker died, or the task raised), a failure record with the last reason."""
    if result.ok:
        return result.value
    graph = task.graph
    where = loop_place(task.file, graph.kernel, graph.loop_index, graph.line)
    message = f"{where}: failed after {result.attempts} attempt(s): {result.error}"
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


# -- progress ---------------------------------------------------------------------------------


class Progress:
    """A rich progress bar when stderr is a terminal, else one plain line per loop."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 0
        self.bar = None
        if self.enabled and sys.stderr.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    TextColumn,
                    TimeElapsedColumn,
                )
                from rich.progress import Progress as RichProgress

                self.bar = RichProgress(
                    TextColumn("[bold]compare[/]"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    TextColumn("{task.description}"),
                    console=Console(stderr=True),
                    transient=True,
                )
            except ImportError:
                self.bar = None

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def advance(self, outcome: dict) -> None:
        self.done += 1
        if not self.enabled:
            return
        line = _progress_text(outcome)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=line)
        else:
            print(f"[{self.done}/{self.total}] {line}", file=sys.stderr, flush=True)


def _progress_text(outcome: dict) -> str:
    if outcome["failure"] is not None:
        f = outcome["failure"]
        return f"{f['file']} loop {f['loop']}: failed ({f['kind']})"
    r, t = outcome["record"], outcome["timing"]
    h, o = r["heuristic"], r["optimal"]
    return (
        f"{r['file']} {r['kernel']} loop {r['loop']}: II {h['ii']} -> {o['ii']} "
        f"({o['status']}, {t['optimal_wall_s']:.2f} s)"
    )

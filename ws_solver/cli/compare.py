"""`ws-solver compare`: heuristic and optimal plans side by side for every warp-specialized
loop under the given paths."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from ..core.options import SURVEY_TIME_LIMIT
from ..pipeline.comparing import CompareResult, collect_files, compare_on
from ..report import compare as cmp
from .backend_options import BACKEND_HELP, add_backend_arguments, backend_from_args, shipped
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
    report,
    report_plan_cache,
    say,
    solve_options,
    triton_version,
    write_output,
)

HELP = "heuristic vs optimal for every warp-specialized loop under the given paths"

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
before the end. The JSON schema is in docs/json-schemas.md ("compare --json") of the source
repository."""

EPILOG = f"""\
examples:
  ws-solver compare "$(ws-solver corpus)" --jobs 2 --time-limit 2 --report compare.html
  ws-solver compare "$(ws-solver corpus)"/gemm_persistent* --json compare.json --report compare.md
  ws-solver compare "$(ws-solver corpus)" --backend ray --ray-address HEAD:6379 --json compare.json

{BACKEND_HELP}

{
    exit_status_epilog(
        EXIT_OK, EXIT_SOME_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INFEASIBLE, EXIT_TIMEOUT
    )
}
  (2, 3, 4 or 5 only when every input failed the same way; mixed failures give 1)"""

REPORT_FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(subparsers, "compare", HELP, DESCRIPTION, EPILOG)
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
        from ..research.seed_column import add_seed_column

        add_seed_column(document, triton, report)
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


def run_compare(paths, args, progress: bool = True, outputs=()) -> CompareResult:
    """`pipeline.comparing.compare_on` over the files under `paths`, on the backend `args`
    asks for (local processes by default, see `backend_from_args`), with `args`' jobs,
    time_limit, workers, seed, cache and retries; `outputs` are files to be written, which
    must not be among the inputs."""
    with backend_from_args(args, ship=shipped()) as backend:
        options = solve_options(args, wall_clock=False)
        triton = triton_version(args)
        files, failures = collect_files(paths, say=report)
        check_distinct(files, outputs)
        result = compare_on(
            backend,
            files,
            options,
            triton,
            failures=failures,
            say=report,
            progress=functools.partial(Progress, enabled=progress),
            jobs=args.jobs,
            retries=getattr(args, "retries", 2),
        )
        report_plan_cache(options)
    return result


# -- progress ---------------------------------------------------------------------------------


class Progress:
    """A rich progress bar when stderr is a terminal, else one plain line per loop."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 0
        self.bar = None
        if self.enabled and sys.stderr is not None and sys.stderr.isatty():
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
            say(f"[{self.done}/{self.total}] {line}")


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

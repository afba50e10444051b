"""What every `ws-solver` command shares: finding inputs, reading them, writing output.

Failures meant for the user are `CliError`s: `main` prints them as one line on stderr,
`ws-solver: <message>`, and exits with their code; no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ir
from ..core import options
from ..core.failures import (  # noqa: F401 (for the commands)
    EXIT_BAD_INPUT,
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    EXIT_TIMEOUT,
    internal_failure,
    resource_failure,
)
from ..model import LoopGraph, build_graph
from ..pipeline.inputs import (  # noqa: F401 (for the commands)
    loop_place,
    module_target,
    plan_failure,
    read_module,
    require_ws_loops,
)
from . import files
from .errors import CliError
from .files import (  # noqa: F401 (for the commands)
    check_distinct,
    check_folder,
    check_output,
    check_stdout,
    write_bytes,
)

PROG = "ws-solver"

# Exit statuses shared by the commands (each command's --help lists the ones it uses).
EXIT_STATUS_HELP = {
    EXIT_OK: "success",
    EXIT_SOME_FAILED: "some inputs failed, the others were done",
    EXIT_BAD_INPUT: "bad input (unreadable, not TTGIR, truncated, compiled TTGIR, no "
    "warp-specialized loop) or usage",
    EXIT_INTERNAL: "internal error",
    EXIT_INFEASIBLE: "a loop is infeasible: no plan fits the target's limits",
    EXIT_TIMEOUT: "the time limit ran out before the solver had a valid plan",
}


def exit_status_epilog(*codes: int) -> str:
    """The `exit status:` paragraph of a command's --help, for the codes it uses."""
    lines = ["exit status:"]
    lines += [f"  {code}  {EXIT_STATUS_HELP[code]}" for code in sorted(codes)]
    lines.append(f"  {EXIT_INTERRUPTED}  interrupted")
    return "\n".join(lines)


def report(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    say(f"{PROG}: {' '.join(message.splitlines())}")


def say(line: str) -> None:
    """`line` on stderr, if it can take it: a closed or broken stderr (no one to tell) must
    not turn a run whose result went out into a failure. (With stderr closed at start,
    sys.stderr is None, and `print(file=None)` would write to stdout, into the result.)"""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def find_ttgir(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The files named, with directories searched recursively for `*.ttgir` (sorted), and a
    message per folder entry skipped (see `files.ttgir_under`)."""
    found: dict[Path, None] = {}
    skipped: list[str] = []
    for arg in paths:
        named, passed = files.ttgir_under(arg)
        found.update(dict.fromkeys(named))
        skipped += [message for _, message in passed]
    return list(found), skipped


def load_graphs(path: Path, loop: int | None = None) -> list[LoopGraph]:
    """The loop graphs of one file: all its warp-specialized loops, or only loop `loop`."""
    return module_graphs(path, read_module(path), loop)


def module_graphs(path: Path, module: ir.Module, loop: int | None = None) -> list[LoopGraph]:
    """`load_graphs` of a module already read from `path`."""
    loops = require_ws_loops(path, module)
    if loop is not None:
        if not 0 <= loop < len(loops):
            count = len(loops)
            raise CliError(
                f"{path}: no loop {loop}: the file has {count} warp-specialized "
                f"loop{'s' if count != 1 else ''} (0..{count - 1})"
            )
        loops = [loops[loop]]
    return [build_graph(module, ws_loop) for ws_loop in loops]


def write_output(text: str, out: str | None) -> None:
    """Write to stdout (`out` None or "-") or to a file, all or nothing (see `files`)."""
    write_bytes(text.encode("utf-8"), out)


# -- shared by the commands that plan loops (partition, compare, explain, demo) ---------------


def positive_float(text: str) -> float:
    """argparse type: a number > 0 (seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def integer_at_least(text: str, least: int, what: str = "") -> int:
    """argparse type body: an integer >= `least`; `what` names it in the message."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what or 'an integer'}: {text!r}") from None
    if value < least:
        must = f"{what} must" if what else "must"
        raise argparse.ArgumentTypeError(f"{must} be >= {least}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return integer_at_least(text, 1)


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (loop indices, seeds)."""
    return integer_at_least(text, 0)


def argument_type(check: Callable[[str], object], name: str) -> Callable[[str], object]:
    """An argparse type from one of ``core.options``' parsers (ValueError → usage error)."""

    def convert(text: str) -> object:
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = name  # argparse names the type in some messages
    return convert


def add_command(subparsers, name: str, help: str, description: str, epilog: str):
    """A subcommand parser whose --help keeps the description's and examples' layout."""
    return subparsers.add_parser(
        name,
        help=help,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_strategy_argument(parser: argparse.ArgumentParser) -> None:
    from ..core.strategy import PIPELINE_STRATEGIES, Strategy

    parser.add_argument(
        "--strategy",
        choices=[s.value for s in PIPELINE_STRATEGIES],
        default=Strategy.OPTIMAL.value,
        help="default: optimal",
    )


# What --time-limit bounds, with the wall clock (partition, explain) and without (compare).
WALL_CLOCK_HELP = (
    "the wall-clock time of planning the loop and CP-SAT's deterministic time, whichever "
    "runs out first (deterministic time is the same on every machine: a run the wall clock "
    "did not stop repeats exactly)"
)
DETERMINISTIC_HELP = (
    "CP-SAT's deterministic time (about wall seconds, but the same on every machine, so "
    "results repeat; the wall clock is not bounded)"
)


def add_solver_arguments(
    parser: argparse.ArgumentParser,
    *,
    cache: bool,
    time_limit: float = options.DEFAULT_TIME_LIMIT,
    clock_help: str = WALL_CLOCK_HELP,
) -> None:
    """--time-limit, --workers, --seed (checked by ``ws_solver.core.options``) and the plan-cache
    switch; `time_limit`: DEFAULT_TIME_LIMIT, or SURVEY_TIME_LIMIT where many plans are made."""
    workers, seed = options.DEFAULT_WORKERS, options.DEFAULT_SEED
    parser.add_argument(
        "--time-limit",
        type=argument_type(options.parse_time_limit, "time limit"),
        default=time_limit,
        metavar="S",
        help=f"time limit per loop, in seconds (default: {time_limit:g}): {clock_help}",
    )
    parser.add_argument(
        "--workers",
        type=argument_type(options.parse_workers, "workers"),
        default=workers,
        metavar="N",
        help=f"CP-SAT search workers per loop, 1 to {options.MAX_WORKERS} (default: {workers}, "
        "as everywhere; the plan depends on it, not on the machine)",
    )
    parser.add_argument(
        "--seed",
        type=argument_type(options.parse_seed, "seed"),
        default=seed,
        metavar="K",
        help=f"solver seed, 0 to {options.MAX_SEED} (default: {seed})",
    )
    if cache:
        parser.add_argument(
            "--no-cache",
            dest="cache",
            action="store_false",
            help="neither reuse nor store plans in the plan cache ($WS_SOLVER_CACHE_DIR, "
            "default ~/.cache/ws_solver/plans)",
        )
    else:
        parser.add_argument(
            "--cache",
            action="store_true",
            help="reuse and store plans in the plan cache (off by default here: solve times "
            "are part of the report)",
        )


def add_target_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        choices=("sm_90", "sm_100"),
        help="plan for this GPU (default: the module's ttg.target)",
    )


def add_triton_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--triton-version",
        metavar="V",
        help="plan for the lowering rules of this Triton release, 3.6.0 or 3.9.0 (default: the "
        "installed Triton's when it is one of them, else 3.6.0); 3.9 lowers other plans than "
        '3.6 (docs/triton-lowering-rules.md in the source repository, "Triton 3.9.0")',
    )


def triton_version(args: argparse.Namespace) -> str:
    """The Triton release to plan for: --triton-version (checked: a CliError, exit 2, names
    the supported ones), else the installed one when supported, else 3.6.0."""
    from ..model.lowering_facts import lowering_facts
    from ..triton.toolchain.versions import planning_version

    asked = getattr(args, "triton_version", None)
    if asked is None:
        return planning_version()
    try:
        return lowering_facts(asked).version
    except ValueError as e:
        raise CliError(f"--triton-version: {e}") from None


def solve_options(args: argparse.Namespace, wall_clock: bool = True):
    """The pipeline's SolveOptions from the parsed --time-limit/--workers/--seed/cache;
    `wall_clock` False bounds deterministic time only (reports that must repeat)."""
    from ..core import cachefiles
    from ..pipeline.partition import SolveOptions

    cachefiles.say = report  # a cache that cannot keep records: one "ws-solver: ..." line
    return SolveOptions(
        time_limit=args.time_limit,
        workers=args.workers,
        seed=args.seed,
        cache=bool(getattr(args, "cache", True)),
        wall_clock=wall_clock,
    )


def report_plan_cache(options) -> None:
    """With the plan cache on, one line on stderr when plans cannot be kept in it (a file,
    a read-only folder, an untrusted key): the run solved everything and keeps nothing."""
    if not getattr(options, "cache", False):
        return
    from ..core import cachefiles
    from ..pipeline import plancache

    why = plancache.unusable()
    if why and cachefiles.first_word(plancache.cache_dir()):  # said once, here or on a write
        report(f"plan cache {plancache.cache_dir()}: {why}; plans are not kept")


# -- the preamble of the commands that plan one file's loops (partition, explain, explore) ----

# The exit statuses of such a command (--help).
PLANNING_EXIT_HELP = exit_status_epilog(
    EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INFEASIBLE, EXIT_TIMEOUT
)


def add_planning_arguments(
    parser: argparse.ArgumentParser,
    *,
    time_limit: float,
    cache: bool,
    strategy: bool = True,
    clock_help: str = WALL_CLOCK_HELP,
) -> None:
    """--strategy (with `strategy`), --target, --triton-version and the solver's arguments."""
    if strategy:
        add_strategy_argument(parser)
    add_target_argument(parser)
    add_triton_argument(parser)
    add_solver_arguments(parser, time_limit=time_limit, cache=cache, clock_help=clock_help)


@dataclass(frozen=True)
class PlanningInput:
    """A command's IN, read and checked, and what its options say to plan it with."""

    path: Path
    module: ir.Module
    loops: list  # its warp-specialized loops
    target: Any  # model.Target, under the lowering rules of `triton`
    triton: str
    options: Any  # pipeline.SolveOptions


def planning_input(
    args: argparse.Namespace, outputs: list[str | None], wall_clock: bool = True
) -> PlanningInput:
    """Check `outputs` (writable, none of them IN), then read IN (`args.input`) and find its
    warp-specialized loops and target (--target, else the module's) under --triton-version;
    each failure a CliError."""
    path = Path(args.input)
    for out in outputs:
        check_output(out)
    check_distinct([path], outputs)
    triton = triton_version(args)
    module = read_module(path)
    loops = require_ws_loops(path, module)
    target = module_target(path, module, args.target, triton)
    return PlanningInput(path, module, loops, target, triton, solve_options(args, wall_clock))


def require_usable(place: str, plan, details: dict, graph: LoopGraph, target, strategy) -> None:
    """A CliError naming `place` when the strategy's plan cannot be used (`plan_failure`)."""
    failure = plan_failure(plan, details, graph, target, strategy)
    if failure is not None:
        raise CliError(f"{place}: {failure.message}", failure.code)


def plan_usable(file: str, graph: LoopGraph, target, strategy: str, options):
    """One loop planned with `strategy` (pipeline.plan_loop): (plan, reason, details); an
    exception is an internal failure naming the loop, an unusable plan a CliError."""
    from ..pipeline.partition import plan_loop

    place = loop_place(file, graph.kernel, graph.loop_index, graph.line)
    try:
        plan, reason, details = plan_loop(graph, target, strategy, options)
    except Exception as e:
        raise internal_failure(place, e) from e
    require_usable(place, plan, details, graph, target, strategy)
    return plan, reason, details


def add_file_command(subparsers, name: str, help: str, description: str, epilog: str):
    """The parser of a command over one TTGIR file (partition, explain, explore), IN added."""
    parser = add_command(subparsers, name, help, description, epilog)
    parser.add_argument("input", metavar="IN.ttgir", help="TTGIR file")
    return parser


# The exit statuses of the commands over a whole corpus that keep going past a failure
# (demo, tune).
CORPUS_EXIT_HELP = exit_status_epilog(EXIT_OK, EXIT_SOME_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL)

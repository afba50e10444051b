"""What every `ws-solver` command shares: finding inputs, reading them, writing output.

Failures meant for the user are `CliError`s: `main` prints them as one line on stderr,
`ws-solver: <message>`, and exits with their code; no traceback.
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable
from pathlib import Path

from .. import ir
from ..core import options
from ..core.strategy import Strategy
from ..model import LoopGraph, build_graph, ws_loops
from ..model.check import check_plan
from . import files
from .errors import CliError
from .files import check_distinct, check_output, write_bytes  # noqa: F401 (for the commands)

PROG = "ws-solver"

# Exit statuses shared by the commands (each command's --help lists the ones it uses).
EXIT_OK = 0
EXIT_SOME_FAILED = 1  # commands over many inputs: some failed, the rest were done
EXIT_BAD_INPUT = 2  # unreadable, not TTGIR, truncated, no warp-specialized loop, usage
EXIT_INTERNAL = 3  # a bug (WS_SOLVER_DEBUG=1 shows the traceback)
EXIT_INFEASIBLE = 4  # a loop has no plan within the target's limits
EXIT_TIMEOUT = 5  # the solver's time ran out before it had any valid plan
EXIT_INTERRUPTED = 130

EXIT_STATUS_HELP = {
    EXIT_OK: "success",
    EXIT_SOME_FAILED: "some inputs failed, the others were done",
    EXIT_BAD_INPUT: "bad input (unreadable, not TTGIR, truncated, no warp-specialized loop) "
    "or usage",
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


# OS errors that say the machine ran out of something, not that ws_solver has a bug.
_RESOURCE_ERRNOS = frozenset(
    {errno.ENOMEM, errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.EDQUOT}
)


def resource_failure(e: BaseException) -> CliError | None:
    """A CliError (exit 2) for running out of memory, disk, file descriptors or processes;
    None for anything else."""
    if isinstance(e, MemoryError):
        return CliError("out of memory (the input may be too large for this machine)")
    if isinstance(e, OSError) and e.errno in _RESOURCE_ERRNOS:
        return CliError(f"out of resources: {e.strerror or e}")
    return None


def internal_failure(place: object, e: BaseException) -> CliError:
    """What an unexpected exception at `place` becomes: a resource failure (exit 2), else an
    internal error (exit 3)."""
    failure = resource_failure(e)
    if failure is not None:
        return CliError(f"{place}: {failure.message}", failure.code)
    return CliError(f"{place}: internal error: {type(e).__name__}: {e}", EXIT_INTERNAL)


def report(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    print(f"{PROG}: {' '.join(message.splitlines())}", file=sys.stderr, flush=True)


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


def read_module(path: Path) -> ir.Module:
    """Read and parse one TTGIR file; any failure is a CliError naming file, line, column."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CliError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CliError(f"{path}:{line}:{column}: not UTF-8 text") from None
    try:
        return ir.parse(text)
    except ir.ParseError as e:
        raise CliError(f"{path}:{e.line}:{e.column}: {e.reason}") from None


def load_graphs(path: Path, loop: int | None = None) -> list[LoopGraph]:
    """The loop graphs of one file: all its warp-specialized loops, or only loop `loop`."""
    return module_graphs(path, read_module(path), loop)


def module_graphs(path: Path, module: ir.Module, loop: int | None = None) -> list[LoopGraph]:
    """`load_graphs` of a module already read from `path`."""
    loops = ws_loops(module)
    if not loops:
        raise CliError(f"{path}: no loop carries tt.warp_specialize")
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


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (loop indices, seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


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
        '3.6 (docs/triton-lowering-rules.md, "Triton 3.9.0")',
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
    from ..pipeline.partition import SolveOptions

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
    from ..pipeline import plancache

    why = plancache.unusable()
    if why:
        report(f"plan cache {plancache.cache_dir()}: {why}; plans are not kept")


def module_target(path: Path, module: ir.Module, override: str | None, triton: str | None = None):
    """The Target to plan for: `override`, else the module's ttg.target (CliError if neither),
    under Triton `triton`'s lowering rules (None: 3.6.0)."""
    from ..pipeline.partition import resolve_target

    try:
        return resolve_target(module, override, triton)
    except ValueError as e:
        raise CliError(f"{path}: {e}") from None


def require_ws_loops(path: Path, module: ir.Module) -> list:
    """The module's warp-specialized loops; a CliError (bad input) when there is none."""
    loops = ws_loops(module)
    if not loops:
        raise CliError(f"{path}: no loop carries tt.warp_specialize")
    return loops


def loop_place(path: Path | str, kernel: str, loop: int, line: int) -> str:
    """How messages name a loop: `FILE:LINE: KERNEL loop N`."""
    return f"{path}:{line}: {kernel} loop {loop}"


def plan_failure(plan, details: dict, graph: LoopGraph, target, strategy: str) -> CliError | None:
    """Why a strategy's plan cannot be used, as a CliError with the matching exit status, or
    None when it can. Strategy "none" never fails: not specializing is always possible."""
    if strategy == Strategy.NONE:
        return None
    status = details.get("status")
    problems = check_plan(plan, graph, target)
    if status == "INFEASIBLE":
        why = f" ({problems[0]})" if problems else ""
        return CliError(f"infeasible: no plan fits the {target.name} limits{why}", EXIT_INFEASIBLE)
    if not problems:
        return None
    if status in (None, "OPTIMAL", "FEASIBLE"):
        # The heuristic (or a skipped solve) gave a plan that breaks a hard limit; nothing
        # better is known, so the loop cannot be planned within the limits.
        return CliError(
            f"no valid plan within the {target.name} limits: {problems[0]}", EXIT_INFEASIBLE
        )
    return CliError(
        f"the solver's time ran out with no valid plan (status {status}; {problems[0]}); "
        "raise --time-limit",
        EXIT_TIMEOUT,
    )

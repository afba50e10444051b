"""`ws-solver partition`: plan every warp-specialized loop of a file and write annotated TTGIR."""

from __future__ import annotations

import argparse

from ..core.options import DEFAULT_TIME_LIMIT
from ..model import build_graph
from ..pipeline.partition import LoopError, partition_module
from ..report.partition import partition_document, summary_line, to_json
from .common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    PLANNING_EXIT_HELP,
    CliError,
    add_file_command,
    add_planning_arguments,
    internal_failure,
    loop_place,
    planning_input,
    report,
    report_plan_cache,
    require_usable,
    write_output,
)

HELP = "partition each warp-specialized loop and write annotated TTGIR"
DESCRIPTION = """\
Decide, for every loop of IN marked tt.warp_specialize, which ops run in which partition
(warp group) and with how many warps and registers, and write the TTGIR with Triton's
partition annotations to OUT (default: stdout). A loop that is not worth specializing
loses its tt.warp_specialize tag and is reported as "not specialized" with the reason.

strategies:
  optimal    CP-SAT, warm-started from the heuristic (default)
  heuristic  the incremental merge heuristic alone
  none       do not specialize any loop

One line per loop goes to stderr (unless --quiet): the decision, the modeled II and, for
optimal, the solver status. --json writes the per-loop report; the schema is in
docs/json-schemas.md ("partition --json") of the source repository. Nothing is written unless
every loop has a valid plan; files are written atomically (all or nothing)."""

EPILOG = f"""\
examples:
  ws-solver partition "$(ws-solver corpus)/attention_fwd.d64_m128n64_w4_s3.sm90.ttgir" -o out.ttgir
  ws-solver partition "$(ws-solver corpus)/gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir" \\
      --strategy heuristic --json report.json > out.ttgir

{PLANNING_EXIT_HELP}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_file_command(subparsers, "partition", HELP, DESCRIPTION, EPILOG)
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT.ttgir",
        help="write the annotated TTGIR to OUT (atomically) instead of stdout",
    )
    add_planning_arguments(parser, time_limit=DEFAULT_TIME_LIMIT, cache=True)
    parser.add_argument("--json", metavar="R.json", help="write the per-loop JSON report to R")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no per-loop summary lines on stderr"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    given = planning_input(args, [args.output, args.json])
    path, module, target, options = given.path, given.module, given.target, given.options
    graphs = []
    for loop in given.loops:
        try:
            graphs.append(build_graph(module, loop))
        except Exception as e:
            where = loop_place(path, loop.kernel, loop.index, loop.op.line)
            raise CliError(f"{where}: cannot build the loop graph: {e}", EXIT_BAD_INPUT) from e
    try:
        reports = partition_module(
            module, args.strategy, args.target, options, graphs, given.triton
        )
    except LoopError as e:
        place = loop_place(path, e.loop.kernel, e.loop.loop, e.loop.line)
        raise internal_failure(place, e.error) from e
    except Exception as e:
        raise internal_failure(path, e) from e
    for graph, loop_report in zip(graphs, reports, strict=True):
        place = loop_place(path, loop_report.kernel, loop_report.loop, loop_report.line)
        require_usable(place, loop_report.plan, loop_report.solver, graph, target, args.strategy)
    if args.json:
        document = partition_document(str(path), target, args.strategy, options, reports)
        write_output(to_json(document), args.json)
    write_output(module.print(), args.output)
    if not args.quiet:
        for loop_report in reports:
            report(summary_line(str(path), loop_report))
    report_plan_cache(options)
    return EXIT_OK

"""`ws-solver explain`: draw a loop's plan on its data-flow graph."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.options import DEFAULT_TIME_LIMIT
from ..model.cost import evaluate
from ..report import explain as ex
from .common import (
    EXIT_OK,
    PLANNING_EXIT_HELP,
    CliError,
    add_file_command,
    add_planning_arguments,
    module_graphs,
    non_negative_int,
    plan_usable,
    planning_input,
    report_plan_cache,
    write_bytes,
    write_output,
)

HELP = "show a loop's plan on its graph (text, DOT, SVG or PNG)"
FORMATS = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".txt": "txt"}

DESCRIPTION = """\
Plan a warp-specialized loop of IN with a strategy and show the plan on the loop's
data-flow graph: nodes coloured by partition, edges that cross partitions marked with the
bytes they carry (and the channel depth), and a legend with each partition's warps,
registers (setmaxnreg) and modeled busy cycles per iteration.

The format follows OUT's extension:
  .txt (or no -o)  plain text: partitions, one line per node, the crossing edges
  .dot             Graphviz; render with `dot -Tsvg OUT.dot -o OUT.svg`
  .svg, .png       a drawing (matplotlib + networkx; Graphviz is not needed)

Text and DOT show every loop of the file unless --loop is given; a drawing shows one loop
(--loop, default 0). Output files are written atomically (all or nothing)."""

EPILOG = f"""\
examples:
  ws-solver explain "$(ws-solver corpus)/attention_fwd.d64_m128n64_w4_s3.sm90.ttgir"
  ws-solver explain "$(ws-solver corpus)/gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir" \\
      --strategy heuristic -o plan.svg
  ws-solver explain "$(ws-solver corpus)/attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir" \\
      --loop 1 -o plan.dot

{PLANNING_EXIT_HELP}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_file_command(subparsers, "explain", HELP, DESCRIPTION, EPILOG)
    parser.add_argument(
        "--loop",
        type=non_negative_int,
        metavar="N",
        help="the N-th warp-specialized loop (0-based; default: all for text/DOT, 0 for images)",
    )
    add_planning_arguments(parser, time_limit=DEFAULT_TIME_LIMIT, cache=True)
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write to OUT (.svg, .png, .dot or .txt) instead of text on stdout",
    )
    return parser


def output_format(out: str | None) -> str:
    if out is None or out == "-":
        return "txt"
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise CliError(f"{out}: unknown output format; use .svg, .png, .dot or .txt")
    return FORMATS[suffix]


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args.output)
    given = planning_input(args, [args.output])
    loop = args.loop if args.loop is not None or fmt in ("txt", "dot") else 0
    graphs = module_graphs(given.path, given.module, loop)
    explained = [
        explain_loop(str(given.path), graph, given.target, args.strategy, given.options)
        for graph in graphs
    ]
    if fmt == "txt":
        write_output("\n".join(ex.explain_text(x) for x in explained), args.output)
    elif fmt == "dot":
        write_output("\n".join(ex.explain_dot(x) for x in explained), args.output)
    else:
        write_bytes(ex.explain_image(explained[0], fmt), args.output)
    report_plan_cache(given.options)
    return EXIT_OK


def explain_loop(file: str, graph, target, strategy: str, options) -> ex.Explained:
    plan, reason, details = plan_usable(file, graph, target, strategy, options)
    cost = evaluate(plan, graph, target)
    return ex.Explained(file, graph, target, strategy, plan, reason, cost, details)

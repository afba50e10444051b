"""`ws-solver graph`: show the data-flow graph of each warp-specialized loop."""

from __future__ import annotations

import argparse

from ..core.wording import count
from ..report.graph import graph_dot, graph_json, graph_text, summary_table
from .common import (
    CliError,
    add_command,
    check_distinct,
    check_output,
    find_ttgir,
    integer_at_least,
    load_graphs,
    report,
    write_output,
)

FORMATS = ("text", "json", "dot", "table")

HELP = "show the data-flow graph of each warp-specialized loop"

DESCRIPTION = """\
Build the loop graph of every loop marked tt.warp_specialize in the given TTGIR files
(directories are searched recursively for *.ttgir) and print it.

formats:
  text   per loop a header, then one line per node with its out-edges (default)
  json   nodes and edges as data; schema: docs/json-schemas.md (source repository)
  dot    Graphviz: region ops are clusters, loop-carried edges dashed, colour = kind
  table  one row per loop: op, value-node and edge counts, counts per kind

text, json and dot stop at the first file that fails (exit 2, nothing written);
table reports each failing file on stderr, goes on, and exits 1 at the end."""

EPILOG = """\
examples:
  ws-solver graph "$(ws-solver corpus)/gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
  ws-solver graph "$(ws-solver corpus)" --format table
  ws-solver graph "$(ws-solver corpus)/attention_fwd.causal_d64_m128n64_w4_s3.sm100.ttgir" \\
      --loop 1 --format dot -o loop1.dot && dot -Tsvg loop1.dot -o loop1.svg

exit status: 0 success; 1 table mode and some files failed; 2 error (bad file, no such
loop, usage); 3 internal error"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(subparsers, "graph", HELP, DESCRIPTION, EPILOG)
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="TTGIR files or folders")
    parser.add_argument(
        "--loop",
        type=_loop_index,
        metavar="N",
        help="only the N-th warp-specialized loop of each file (0-based, in textual order)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="default: text")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write to OUT (atomically: all or nothing) instead of stdout",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    files, skipped = find_ttgir(args.paths)
    check_distinct(files, [args.output])
    if args.format == "table":
        return _table(files, skipped, args)
    if skipped:
        raise CliError(skipped[0])
    loops = [(str(f), g) for f in files for g in load_graphs(f, args.loop)]
    if args.format == "json":
        text = graph_json(loops)
    elif args.format == "dot":
        text = "\n".join(graph_dot(f, g) for f, g in loops)
    else:
        text = "\n".join(graph_text(f, g) for f, g in loops)
    write_output(text, args.output)
    return 0


def _table(files, skipped: list[str], args: argparse.Namespace) -> int:
    loops, failed = [], 0
    for message in skipped:
        report(message)
    for f in files:
        try:
            loops.extend((str(f), g) for g in load_graphs(f, args.loop))
        except CliError as e:
            report(e.message)
            failed += 1
    text = summary_table(loops)
    text += f"{count(len(loops), 'loop')} in {count(len(files) - failed, 'file')}"
    text += f"; {failed} of {count(len(files), 'file')} failed" if failed else ""
    text += f"; {count(len(skipped), 'entry', 'entries')} skipped\n" if skipped else "\n"
    write_output(text, args.output)
    return 1 if failed or skipped else 0


def _loop_index(text: str) -> int:
    return integer_at_least(text, 0, "a loop index")

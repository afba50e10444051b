"""`ws-solver corpus`: print where the bundled corpus is, so that the examples run the same
from a checkout and from an installed wheel in any folder."""

from __future__ import annotations

import argparse

from ..core.bundled import corpus_path
from .common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_command,
    add_triton_argument,
    exit_status_epilog,
    triton_version,
    write_output,
)

HELP = "print the folder of the bundled corpus (TTGIR dumps to try the commands on)"

DESCRIPTION = """\
Print the folder that holds the bundled corpus: the TTGIR dumps of the corpus kernels, as
Triton has them before its warp specialization (the planner's input), with index.json, the
stock Triton decision recorded for each. An installed wheel holds them as package data; a
checkout reads corpus/ttgir (Triton 3.6.0) or corpus/ttgir-3.9 (3.9.0). The folder is the one
for the Triton release the commands plan for (--triton-version, else the installed Triton's
when supported, else 3.6.0). From Python: ws_solver.corpus_path()."""

EPILOG = f"""\
examples:
  ws-solver corpus
  ws-solver corpus --list
  ws-solver graph "$(ws-solver corpus)/gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
  ws-solver compare "$(ws-solver corpus)" --jobs 2 --time-limit 1 --json compare.json

{exit_status_epilog(EXIT_OK, EXIT_BAD_INPUT)}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(subparsers, "corpus", HELP, DESCRIPTION, EPILOG)
    parser.add_argument(
        "--list", action="store_true", help="print the path of each TTGIR file, one per line"
    )
    add_triton_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    folder = corpus_path(triton_version(args))
    lines = sorted(str(p) for p in folder.glob("*.ttgir")) if args.list else [str(folder)]
    write_output("\n".join(lines) + "\n", None)
    return EXIT_OK

"""`ws-solver reports`: the compile log that processes wrote (WS_SOLVER_REPORT, or
enable(report_file=...)) as a table."""

from __future__ import annotations

import argparse
import fnmatch
import json
from dataclasses import asdict, replace

from ..report.reports import render
from ..triton.dropin import reportlog
from .common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    CliError,
    add_command,
    exit_status_epilog,
    write_output,
)

DESCRIPTION = """\
Read a compile log and show one row per kernel compile: the process (pid), the kernel and
its target (sm), the strategy asked for and the one used ("stock": Triton's own stages, after
every strategy failed or because WS_SOLVER_SKIP names the kernel), the plan of each
warp-specialized loop ("3p": specialized into 3 partitions, "-": unspecialized, "triton":
Triton's partitioner decided), how many attempts fell back (fb), the decision kept
(specialized or not), stock Triton's decision where the decision check built it ("same" or
what stock decided instead), the check's rule, and the compile's seconds.

A compile log is a file of JSON lines. Every process appends to it when it runs with
WS_SOLVER=<strategy> and WS_SOLVER_REPORT=FILE in its environment (docs/torch-compile.md
in the source repository), or calls ws_solver.triton.enable(report_file=FILE); processes
that were asked to switch on and could not say why ("off" lines)."""

EPILOG = f"""\
examples:
  WS_SOLVER=optimal WS_SOLVER_REPORT=/tmp/ws.jsonl python train.py
  ws-solver reports /tmp/ws.jsonl
  ws-solver reports /tmp/ws.jsonl --kernel 'triton_tem_*'
  ws-solver reports /tmp/ws.jsonl --json > summary.json

{exit_status_epilog(EXIT_OK, EXIT_BAD_INPUT)}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers, "reports", "summarize a compile log (WS_SOLVER_REPORT)", DESCRIPTION, EPILOG
    )
    parser.add_argument("input", metavar="FILE", help="compile log (JSON lines)")
    parser.add_argument(
        "--kernel", metavar="PATTERN", help="only kernels whose name matches (fnmatch)"
    )
    parser.add_argument(
        "--json", action="store_true", help="the rows and totals as JSON instead of a table"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        records = reportlog.read(args.input)
    except reportlog.CompileLogError as e:
        raise CliError(str(e), EXIT_BAD_INPUT) from None
    except FileNotFoundError:
        raise CliError(f"{args.input}: no such file", EXIT_BAD_INPUT) from None
    except IsADirectoryError:
        raise CliError(f"{args.input}: a folder, not a compile log", EXIT_BAD_INPUT) from None
    except OSError as e:
        raise CliError(f"{args.input}: cannot read it ({e.strerror or e})", EXIT_BAD_INPUT) from e
    summary = reportlog.summarize(records)
    if args.kernel:
        rows = tuple(r for r in summary.rows if fnmatch.fnmatchcase(r.kernel, args.kernel))
        summary = replace(summary, rows=rows)
    if args.json:
        write_output(json.dumps(asdict(summary), indent=2, sort_keys=True) + "\n", None)
    else:
        write_output(render(args.input, summary), None)
    return EXIT_OK

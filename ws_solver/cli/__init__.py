"""The `ws-solver` command.

Each subcommand is a module of this package with `add_parser(subparsers)`, which adds and
returns its argparse parser, and `run(args) -> int`. To add one, write the module and list
it in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import os

from .. import __version__
from ..core.envvars import VARIABLE
from ..triton.toolchain.versions import UnsupportedTritonVersion
from . import compare, corpus, demo, explain, explore, graph, partition, reports, tune
from .common import PROG, CliError, report, resource_failure
from .files import check_stdout, discard_stdout, is_stdout

COMMANDS = [graph, partition, compare, explore, explain, demo, corpus, tune, reports]

# An installed wheel holds neither docs/ nor the checkout's corpus/: the pages are named as
# the source repository has them, and `ws-solver corpus` prints where the bundled corpus is.
EPILOG = """\
examples (they run from any folder, installed or in a checkout):
  ws-solver demo
  ws-solver graph "$(ws-solver corpus)/gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
  ws-solver compare "$(ws-solver corpus)" --jobs 2 --time-limit 1 --json compare.json

`ws-solver COMMAND --help` for each command's options and exit statuses. The full reference
is docs/cli.md and the JSON the commands write docs/json-schemas.md, in the source
repository (a wheel does not install docs/)."""

DEBUG_ENV = "WS_SOLVER_DEBUG"  # set to 1 to get a traceback instead of "internal error"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Warp-specialization partitioner for Triton GPU IR (TTGIR) loops.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers).set_defaults(run=command.run)
    return parser


# The commands whose result goes to stdout only without -o; the others always print there.
OUTPUT_OPTION_COMMANDS = ("graph", "partition", "explain")


def uses_stdout(args: argparse.Namespace) -> bool:
    """Whether the command writes to stdout (then it must be open before any work)."""
    if getattr(args, "command", None) in OUTPUT_OPTION_COMMANDS:
        return is_stdout(args.output)
    return True


def main(argv: list[str] | None = None) -> int:
    """Run `ws-solver` with `argv` (default: the process arguments); returns the exit status.
    The commands choose their strategies themselves: $WS_SOLVER (docs/torch-compile.md) is
    dropped before Triton is imported, for this process and the ones it starts."""
    os.environ.pop(VARIABLE, None)
    args = build_parser().parse_args(argv)
    try:
        if uses_stdout(args):
            check_stdout()  # before any work, as every output file is
        return args.run(args)
    except CliError as e:
        report(e.message)
        return e.code
    except UnsupportedTritonVersion as e:
        report(str(e))
        return 2
    except KeyboardInterrupt:
        report("interrupted")
        return 130
    except BrokenPipeError as e:  # a reader gone, past `files.write_bytes` (which says so)
        discard_stdout()
        report(f"cannot write: {e.strerror or e}")
        return 2
    except Exception as e:
        if os.environ.get(DEBUG_ENV):
            raise
        failure = resource_failure(e)
        if failure is not None:
            report(failure.message)
            return failure.code
        report(f"internal error: {type(e).__name__}: {e} (set {DEBUG_ENV}=1 for a traceback)")
        return 3

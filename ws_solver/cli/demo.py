"""`ws-solver demo`: compare heuristic and optimal over the bundled corpus; write a report
folder (Markdown, HTML with plots, JSON, PNGs) and print its path."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ..core.bundled import corpus_path, packaged_corpus  # noqa: F401 (tests)
from ..core.options import SURVEY_TIME_LIMIT
from ..model.lowering_facts import DEFAULT_TRITON
from ..report import compare as cmp
from . import files
from .common import (
    CORPUS_EXIT_HELP,
    DETERMINISTIC_HELP,
    EXIT_INTERNAL,
    CliError,
    add_command,
    add_solver_arguments,
    add_triton_argument,
    check_output,
    positive_int,
    triton_version,
    write_bytes,
    write_output,
)
from .compare import run_compare

DEFAULT_OUT = "out/demo"
# 46 loops at 2 deterministic seconds each, over 2 processes, finish in well under a minute
# on 2 cores (most loops are proven optimal long before the limit).
DEFAULT_TIME_LIMIT = SURVEY_TIME_LIMIT
DEFAULT_JOBS = max(1, min(8, os.cpu_count() or 1))
FILES = ("report.html", "report.md", "compare.json", "ii.png", "solve_time.png")

HELP = "compare heuristic and optimal on the bundled corpus; write an HTML report"

DESCRIPTION = f"""\
Run `ws-solver compare` over the bundled corpus (the folder `ws-solver corpus` prints:
the repository's corpus/ttgir, or corpus/ttgir-3.9 when planning for Triton 3.9.0, which an
installed wheel holds as package data; --corpus to use another folder) and write a report
folder OUT (default: {DEFAULT_OUT}):

  report.html     self-contained report: summary, II-reduction distribution, plots of
                  heuristic vs optimal II per loop and of solve times, a table per loop,
                  and which heuristic decisions the optimum overrode
  report.md       the same as Markdown (the plots are the PNGs beside it)
  compare.json    the comparison data (schema: docs/json-schemas.md, source repository)
  ii.png, solve_time.png

With the defaults ({DEFAULT_TIME_LIMIT:g} deterministic seconds per loop, one process per
core) it takes well under a minute on 2 cores. The folder's path is printed at the end."""

EPILOG = f"""\
examples:
  ws-solver demo
  ws-solver demo --out /tmp/ws-demo --time-limit 5 --jobs 4

{CORPUS_EXIT_HELP}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(subparsers, "demo", HELP, DESCRIPTION, EPILOG)
    parser.add_argument(
        "--out", metavar="DIR", default=DEFAULT_OUT, help=f"report folder (default: {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--corpus", metavar="PATH", help="TTGIR files or folder (default: the bundled corpus)"
    )
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"loops solved in parallel (default: the number of cores, here {DEFAULT_JOBS})",
    )
    add_solver_arguments(
        parser,
        time_limit=DEFAULT_TIME_LIMIT,
        cache=False,
        clock_help=DETERMINISTIC_HELP,
    )
    add_triton_argument(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return parser


def bundled_corpus(triton: str = DEFAULT_TRITON) -> Path:
    """The corpus dumped by Triton `triton` (corpus/ttgir for 3.6.0, corpus/ttgir-3.9 for
    3.9.0): the wheel's copy or the checkout's (`core.bundled.corpus_path`)."""
    try:
        return corpus_path(triton)
    except CliError as e:
        raise CliError(f"{e.message}; pass --corpus PATH") from None


def run(args: argparse.Namespace) -> int:
    corpus = Path(args.corpus) if args.corpus else bundled_corpus(triton_version(args))
    if not corpus.exists():
        raise CliError(f"{corpus}: no such file or directory")
    out = Path(args.out)
    check_folder(out)
    result = run_compare([_display_path(corpus)], args, progress=not args.quiet)
    document = result.document
    if not document["loops"]:
        raise CliError(f"{corpus}: no loop could be compared", result.exit_status or EXIT_INTERNAL)
    files = render(document)
    write_folder(out, files)
    lines = cmp.summary_lines(document)
    lines.append(f"report folder: {out.resolve()}")
    lines.append(f"  open {out.resolve() / 'report.html'} in a browser")
    write_output("\n".join(lines) + "\n", None)
    return result.exit_status


def _display_path(path: Path) -> str:
    """The corpus as the report names it: relative to the current folder when under it."""
    relative = os.path.relpath(path.resolve())
    return path.as_posix() if relative.startswith("..") else Path(relative).as_posix()


def render(document: dict) -> dict[str, bytes]:
    """Every file of the report folder, in memory (nothing is written if one fails)."""
    from ..report.plots import render_plots

    plots = render_plots(document)
    captions = [(name, caption) for name, caption, _ in plots]
    files = {
        "report.html": cmp.to_html(document, plots).encode("utf-8"),
        "report.md": cmp.to_markdown(document, captions).encode("utf-8"),
        "compare.json": cmp.to_json(document).encode("utf-8"),
    }
    files.update({name: data for name, _, data in plots})
    return files


def check_folder(out: Path) -> None:
    """Fail before any solving when the report folder cannot be made or written: `out` is
    a writable folder whose report files can be written, or can be made in one."""
    if out.exists():
        if not out.is_dir():
            raise CliError(f"{out}: not a directory")
        why = files.unwritable_folder(out)
        if why:
            raise CliError(f"{out}: cannot write: {why}")
        for name in FILES:
            check_output(str(out / name))
        return
    parent = out.absolute().parent
    while not parent.exists() and not parent.is_symlink():
        parent = parent.parent
    if not parent.is_dir():
        raise CliError(f"{out}: cannot make the folder: {parent} is not a directory")
    why = files.unwritable_folder(parent)
    if why:
        raise CliError(f"{out}: cannot make the folder in {parent}: {why}")


def _written_through(path: Path) -> bool:
    """A link or a device: written where it points, not replaced (see `files`)."""
    return path.is_symlink() or (path.exists() and not path.is_file())


def write_folder(out: Path, files: dict[str, bytes]) -> None:
    """Write the files into a fresh folder beside `out`, then move each into `out` (made if
    needed) with an atomic rename: a failed run leaves no half-written file. Links and
    devices among them are written through, never replaced."""
    made = [f for f in (out, *out.absolute().parents) if not os.path.lexists(f)]
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=out, prefix=".demo-"))
    except OSError as e:
        _remove_empty(made)
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
    try:
        direct = {name for name in files if _written_through(out / name)}
        for name, data in files.items():
            if name not in direct:
                (staging / name).write_bytes(data)
        for name, data in files.items():
            if name in direct:
                write_bytes(data, out / name)
            else:
                os.replace(staging / name, out / name)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(made)  # a full disk leaves no empty report folder behind
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_empty(made: list[Path]) -> None:
    """Remove the folders this run made (innermost first) that are still empty."""
    for folder in made:
        with contextlib.suppress(OSError):
            folder.rmdir()

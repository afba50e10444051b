"""What every `ws-solver` command shares: finding inputs, reading them, writing output.

Failures meant for the user are `CliError`s: `main` prints them as one line on stderr,
`ws-solver: <message>`, and exits with their code; no traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .. import ir
from ..model import LoopGraph, build_graph, ws_loops

PROG = "ws-solver"


class CliError(Exception):
    """A failure reported to the user as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def report(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    print(f"{PROG}: {' '.join(message.splitlines())}", file=sys.stderr, flush=True)


def find_ttgir(paths: list[str]) -> list[Path]:
    """The files named, with directories searched recursively for `*.ttgir` (sorted)."""
    found: dict[Path, None] = {}
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.ttgir") if p.is_file())
            if not files:
                raise CliError(f"{arg}: no *.ttgir files in this directory")
            found.update(dict.fromkeys(files))
        elif path.exists():
            found[path] = None
        else:
            raise CliError(f"{arg}: no such file or directory")
    return list(found)


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
    module = read_module(path)
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
    """Write to stdout (`out` None or "-") or atomically to a file: the file either keeps
    its old content or gets all of the new one, never a part."""
    data = text.encode("utf-8")
    if out is None or out == "-":
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(text)
        else:
            sys.stdout.flush()
            stream.write(data)
        sys.stdout.flush()
        return
    target = Path(out)
    try:
        mode = target.stat().st_mode & 0o7777 if target.exists() else _default_mode()
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
        raise


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask

"""Files in and out of the commands: the TTGIR files a path names (`pipeline.inputs`), and
output written whole without ever replacing something that is not a regular file.

Output rules: a symbolic link is written through, to its target; a FIFO or a character
device (``/dev/null``, ``/dev/stdout``) is written directly, as a shell's ``>`` would; a
regular file (or a new one) is written atomically (a temporary file beside it, then a
rename), so it keeps its old content or gets all of the new one. A directory, a block device
or a socket is refused, and so is an output that is also an input or another output.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..pipeline.inputs import ttgir_under  # noqa: F401 (the inputs a path names)
from .errors import CliError

# Nodes written in place rather than replaced (what `>` in a shell does with them).
_DIRECT = (stat.S_ISFIFO, stat.S_ISCHR)


# -- outputs ----------------------------------------------------------------------------------
def is_stdout(out: str | os.PathLike | None) -> bool:
    return out is None or str(out) == "-"


def check_output(out: str | os.PathLike | None) -> None:
    """Fail before any work when `out` cannot be written under the rules above (None: no
    output; "-": stdout, which must be open)."""
    if out is None:
        return
    if is_stdout(out):
        check_stdout()
        return
    node = _stat(out)
    if node is not None:
        _check_writable(node, out)
        if not stat.S_ISREG(node.st_mode):
            return
    folder = Path(os.path.realpath(out)).parent
    if not folder.is_dir():
        raise CliError(f"{out}: cannot write: no such directory {str(folder)!r}")
    why = unwritable_folder(folder)
    if why:
        raise CliError(f"{out}: cannot write: {why}")


def unwritable_folder(folder: str | os.PathLike) -> str:
    """Why no file can be made in the directory `folder` ("" when one can): found by making
    (and removing) one, since permission bits do not tell for root, who still cannot write
    to a read-only mount or to /proc."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ws-solver-probe-")
    except OSError as e:  # in /proc: ENOENT, though the folder is there
        return "no file can be made there" if e.errno == errno.ENOENT else e.strerror or str(e)
    os.close(fd)
    os.unlink(probe)
    return ""


def check_folder(folder: str | os.PathLike, names: Iterable[str] = ()) -> None:
    """Fail before any work when the existing directory `folder` cannot take new files, or
    one of `names` in it cannot be written."""
    if not os.path.isdir(folder):
        raise CliError(f"{folder}: cannot write: no such directory")
    why = unwritable_folder(folder)
    if why:
        raise CliError(f"{folder}: cannot write: {why}")
    for name in names:
        check_output(os.path.join(folder, name))


# -- stdout -----------------------------------------------------------------------------------
def stdout_closed() -> str:
    """Why stdout cannot be written at all ("" when it may be): closed (`>&-`: Python then
    has no sys.stdout) or its descriptor no longer open. A stream without a descriptor (a
    test's capture) counts as open."""
    stream = sys.stdout
    if stream is None:
        return "closed"
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return "closed" if getattr(stream, "closed", False) else ""
    try:
        os.fstat(fd)
    except OSError as e:
        return "closed" if e.errno == errno.EBADF else (e.strerror or str(e))
    return ""


def check_stdout() -> None:
    """Fail before any work when the command's output would go to a closed stdout."""
    why = stdout_closed()
    if why:
        raise CliError(f"stdout: cannot write: {why}")


def check_distinct(inputs: Iterable[str | os.PathLike], outputs: Iterable[str | None]) -> None:
    """Refuse an output that is one of the inputs or given twice (regular or new files; a
    device or FIFO may take several outputs)."""
    seen: dict[object, str] = {}
    for path in inputs:
        key = _identity(path)
        if key is not None:
            seen.setdefault(key, "input")
    for out in outputs:
        if is_stdout(out):
            continue
        key = _identity(out)
        if key is None:
            continue
        if key in seen:
            what = "an input" if seen[key] == "input" else f"also given as {seen[key]}"
            raise CliError(f"{out}: the output file is {what}; choose another file")
        seen[key] = str(out)


def write_bytes(data: bytes, out: str | os.PathLike | None) -> None:
    """Write `data` to stdout (`out` None or "-") or to the file `out`, under the rules
    above."""
    if is_stdout(out):
        _write_stdout(data)
        return
    node = _stat(out)
    if node is not None:
        _check_writable(node, out)
    if node is not None and not stat.S_ISREG(node.st_mode):
        _write_in_place(out, data)  # through any link, as the kernel resolves it
        return
    mode = stat.S_IMODE(node.st_mode) if node is not None else _default_mode()
    _write_atomic(Path(os.path.realpath(out)), data, mode, out)


def _stat(out: str | os.PathLike) -> os.stat_result | None:
    """The node `out` names, through links; None when there is none (yet)."""
    try:
        return os.stat(out)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None


def _check_node(node: os.stat_result, out: str | os.PathLike) -> None:
    if stat.S_ISDIR(node.st_mode):
        raise CliError(f"{out}: cannot write: is a directory")
    if not any(test(node.st_mode) for test in _DIRECT):
        raise CliError(f"{out}: cannot write: not a regular file, FIFO or character device")


def _check_writable(node: os.stat_result, out: str | os.PathLike) -> None:
    """An existing `out` is written only if the user may write it, as the shell's `>` would:
    replacing a write-protected file in a writable folder is not writing it."""
    if not stat.S_ISREG(node.st_mode):
        _check_node(node, out)
    if not os.access(out, os.W_OK):
        raise CliError(f"{out}: cannot write: permission denied")


def _identity(path: str | os.PathLike) -> object | None:
    """What names the same file: device and inode of a regular file, the resolved path of a
    new one; None for devices and FIFOs."""
    try:
        node = os.stat(path)
    except FileNotFoundError:
        return ("new", os.path.realpath(path))
    except OSError:
        return None
    return (node.st_dev, node.st_ino) if stat.S_ISREG(node.st_mode) else None


def _write_in_place(out: str | os.PathLike, data: bytes) -> None:
    try:
        fd = os.open(out, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None


def _write_atomic(real: Path, data: bytes, mode: int, out: str | os.PathLike) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
        raise


def _write_stdout(data: bytes) -> None:
    """Write to stdout; a failure (closed, a reader gone, a full disk) is a CliError, and
    what is left in Python's buffer goes nowhere."""
    check_stdout()
    try:
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            sys.stdout.write(data.decode("utf-8", errors="replace"))
        else:
            sys.stdout.flush()
            stream.write(data)
        sys.stdout.flush()
    except (OSError, ValueError) as e:  # ValueError: a stream already closed
        discard_stdout()
        why = getattr(e, "strerror", None) or str(e)
        raise CliError(f"stdout: cannot write: {why}") from None


def discard_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask

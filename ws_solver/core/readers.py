"""The one reader of every file ws_solver reads back: plan and tuning records, probe verdicts,
compile logs, TTGIR inputs, index files.

A file is read as data, never trusted: only a regular file (checked on the opened descriptor,
opened with ``O_NONBLOCK`` so that a FIFO at its path is refused, not waited on; a device such
as /dev/zero is refused before one byte is read), at most ``limit`` bytes (read in chunks, so
an endless file costs ``limit`` bytes, not all memory), optionally not through a symbolic link.
JSON is decoded with a nesting cap (``MAX_DEPTH``): deep text is a ``BadJSON``, never a
``RecursionError``. Callers map ``BadFile`` and ``BadJSON`` to their own outcome: a cache miss
that is then repaired (records), or a one-line error naming the file (inputs, logs).

``tests/test_readers_only.py`` checks that no other module of the package opens a file to
read it, or decodes JSON from one, except the short list of reasons it names.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from typing import Any

MAX_RECORD_BYTES = 16 << 20  # a cache record: a 5,000-node plan record is about 0.2 MB
MAX_INPUT_BYTES = 64 << 20  # a TTGIR input: the corpus's largest file is under 1 MB
MAX_LOG_BYTES = 1 << 30  # a compile log, read line by line
MAX_LINE_BYTES = 16 << 20  # one line of a compile log
MAX_DEPTH = 64  # JSON nesting: records nest at most about 6 deep
_CHUNK = 1 << 20
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS = re.compile(r"[\[\]{}]")
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)


class BadFile(ValueError):
    """A file that is there but cannot be read as one (the message says why)."""


class BadJSON(ValueError):
    """Text that is not JSON ws_solver takes (the message says why)."""


def open_regular(path: str | os.PathLike, follow: bool = False) -> int | None:
    """A descriptor of the regular file at ``path`` (None when there is none), opened
    without blocking; BadFile when it is a symbolic link (unless ``follow``), not a regular
    file or cannot be opened."""
    flags = _FLAGS if follow else _FLAGS | getattr(os, "O_NOFOLLOW", 0)
    try:  # first by its name, so that a device is not even opened (opening some acts)
        node = os.stat(path, follow_symlinks=follow)
    except FileNotFoundError:
        return None
    except OSError:
        node = None  # said by open() below
    if node is not None and not stat.S_ISLNK(node.st_mode):
        if stat.S_ISDIR(node.st_mode):
            raise BadFile("it is a folder")
        if not stat.S_ISREG(node.st_mode):
            raise BadFile("it is not a regular file")
    try:  # then on the descriptor, which is what is read
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP and not follow:
            raise BadFile("it is a symbolic link") from None
        if e.errno == errno.EISDIR:
            raise BadFile("it is a folder") from None
        raise BadFile(f"it cannot be read ({e.strerror or e})") from None
    try:
        node = os.fstat(fd)
        if stat.S_ISDIR(node.st_mode):
            raise BadFile("it is a folder")
        if not stat.S_ISREG(node.st_mode):
            raise BadFile("it is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | os.PathLike, limit: int, follow: bool = False) -> bytes | None:
    """The bytes of the regular file ``path`` (None when there is none); BadFile when it is
    not one (see ``open_regular``), larger than ``limit`` bytes or unreadable."""
    fd = open_regular(path, follow)
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            raise BadFile(f"it is larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise BadFile(f"it is larger than {limit} bytes")
    except OSError as e:
        raise BadFile(f"it cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(
    path: str | os.PathLike, limit: int = MAX_RECORD_BYTES, follow: bool = False
) -> str | None:
    """``read_bytes`` as UTF-8 text; BadFile also when it is not UTF-8."""
    data = read_bytes(path, limit, follow)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadFile("it is not UTF-8 text") from None


def lines(
    path: str | os.PathLike,
    limit: int = MAX_LOG_BYTES,
    line_limit: int = MAX_LINE_BYTES,
    follow: bool = True,
) -> Iterator[bytes]:
    """The lines of the regular file ``path`` (each with its newline, the last maybe
    without), read a chunk at a time; FileNotFoundError when there is none, BadFile when it
    is not a regular file, larger than ``limit`` bytes, or has a line over ``line_limit``."""
    fd = open_regular(path, follow)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    try:
        size, rest = 0, b""
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError as e:
                raise BadFile(f"it cannot be read ({e.strerror or e})") from None
            size += len(chunk)
            if size > limit:
                raise BadFile(f"it is larger than {limit} bytes")
            if not chunk:
                break
            parts = (rest + chunk).split(b"\n")
            rest = parts.pop()
            for part in parts:
                yield part + b"\n"
            if len(rest) > line_limit:
                raise BadFile(f"it has a line longer than {line_limit} bytes")
        if rest:
            yield rest
    finally:
        os.close(fd)


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``text``; BadJSON when it is not JSON or nests deeper than
    ``max_depth`` arrays and objects (checked without recursion, so any depth is refused,
    not a RecursionError)."""
    if _bracket_count(text) > max_depth and _depth(text) > max_depth:
        raise BadJSON(f"it nests deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # cannot happen below max_depth; kept so that none escapes
        raise BadJSON(f"it nests deeper than {max_depth} levels") from None
    except ValueError as e:
        raise BadJSON(f"it is not JSON ({getattr(e, 'msg', e)})") from None


def load(
    path: str | os.PathLike,
    limit: int = MAX_RECORD_BYTES,
    max_depth: int = MAX_DEPTH,
    follow: bool = False,
) -> Any:
    """The JSON value of the file ``path`` (``read_text`` then ``loads``); FileNotFoundError
    when there is none; BadFile or BadJSON saying why it is not one."""
    text = read_text(path, limit, follow)
    if text is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    return loads(text, max_depth)


def _bracket_count(text: str | bytes) -> int:
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def _depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (brackets inside strings
    not counted); a loop over its brackets, no recursion."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest

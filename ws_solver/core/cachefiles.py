"""Cache files read as data (through ``readers``, the one reader), for the plan cache
(`plancache`) and the tuning choices (`triton.tunecache`): a record is a regular file of
bounded size and nesting, read without following a link and without blocking (a FIFO or a
link to /dev/zero at its path is a bad record, not a hang or an exhausted memory), and it is
signed: an HMAC-SHA256 with a secret that only its user can read, kept in the cache folder
(`KEY_NAME`), so that a record planted by anyone else who can write the folder is not served.
A record's signature covers the key it is stored under, so that a record copied or renamed
to another key's name is not served either.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import readers

MAX_RECORD_BYTES = readers.MAX_RECORD_BYTES
KEY_NAME = ".key"  # the folder's secret: 64 hex digits, mode 0600, owned by its user
_KEY_HEX = 64

BadFile = readers.BadFile  # a cache file that is there but cannot be one (the message says why)


def read_text(path: Path, limit: int = MAX_RECORD_BYTES) -> str | None:
    """The UTF-8 text of the regular file `path` (None when there is none); BadFile when it
    is a link, not a regular file, larger than `limit` bytes, unreadable or not UTF-8."""
    return readers.read_text(path, limit)


_said: set[str] = set()


def _to_stderr(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # a closed stderr says nothing
        print(f"ws_solver: {message}", file=sys.stderr, flush=True)


# How a process says it (the command line sets its own: "ws-solver: ..." lines).
say: Callable[[str], None] = _to_stderr


def say_unwritable(what: str, folder: Path, error: BaseException, records: str) -> None:
    """Say once per process and folder (``say``) that ``records`` cannot be kept in the
    ``what`` ``folder`` (a full disk, a read-only folder): the run goes on, the next process
    solves or tunes again; never silent, never a line per record."""
    if first_word(folder):
        why = getattr(error, "strerror", None) or str(error)
        say(f"{what} {folder}: cannot write ({why}); {records} are not kept")


def first_word(folder: Path) -> bool:
    """Whether nothing was said yet in this process about keeping records in ``folder``
    (and from now on, something was: the caller says it)."""
    where = str(folder)
    if where in _said:
        return False
    _said.add(where)
    return True


def folder_key(folder: Path, create: bool) -> bytes | None:
    """The secret of the cache `folder` (None when it has none and `create` is false; made,
    with the folder, when `create`); BadFile when it cannot be trusted (a link, not a regular
    file, another user's, readable by others, malformed) or cannot be made."""
    path = folder / KEY_NAME
    text = _read_key(path)
    if text is None and create:
        _make_key(folder, path)
        text = _read_key(path)
    if text is None:
        return None
    return bytes.fromhex(text)


def sign(key: bytes, text: str) -> str:
    """The HMAC-SHA256 of `text` under `key`, in hex."""
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def same(mac: object, expected: str) -> bool:
    """Whether `mac` (read from a record) is `expected`, in constant time."""
    return isinstance(mac, str) and hmac.compare_digest(mac.encode(), expected.encode())


def _read_key(path: Path) -> str | None:
    try:
        fd = readers.open_regular(path)
    except BadFile as e:
        raise BadFile(f"its key {path}: {e}") from None
    if fd is None:
        return None
    try:
        node = os.fstat(fd)
        if hasattr(os, "geteuid") and node.st_uid != os.geteuid():
            raise BadFile(f"its key {path} belongs to another user")
        if node.st_mode & 0o077:
            raise BadFile(f"its key {path} may be read or written by other users")
        data = os.read(fd, _KEY_HEX + 1)
    finally:
        os.close(fd)
    text = data.decode("ascii", errors="replace")
    if len(text) != _KEY_HEX or any(c not in "0123456789abcdef" for c in text):
        raise BadFile(f"its key {path} is not {_KEY_HEX} hex digits")
    return text


def _make_key(folder: Path, path: Path) -> None:
    """Write a fresh key to `path`, unless another process made one first (a link, which
    does not replace: both then read the same key). A folder made here for it is removed
    again when the key cannot be written (a full disk leaves no empty folder)."""
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".key.", suffix=".tmp")
    except OSError as e:
        if made:
            remove_if_empty(folder)
        raise BadFile(f"it cannot be written ({e.strerror or e})") from None
    failed = True
    try:
        with os.fdopen(fd, "w") as f:  # mkstemp made it 0600
            f.write(secrets.token_hex(_KEY_HEX // 2))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
        failed = False
    except OSError as e:
        raise BadFile(f"it cannot be written ({e.strerror or e})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if failed and made:
            remove_if_empty(folder)


def remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` if it is empty (a cache folder made for nothing)."""
    with contextlib.suppress(OSError):
        folder.rmdir()

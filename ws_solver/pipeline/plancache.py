"""Solved plans, cached by what determines them: loop graph, target, strategy, options, code.

One JSON file per key under ``$WS_SOLVER_CACHE_DIR`` (default ``~/.cache/ws_solver/plans``),
written atomically (temp file + rename), and an in-memory copy per directory so that a
process re-compiling the same loop (autotuning sweeps, benchmark repeats) asks neither the
disk nor the solver twice. The drop-in and the CLI share it through
``ws_solver.pipeline.partition.plan_loop``.

Records are read as data (``cachefiles``): regular files of bounded size only, signed with
the cache folder's secret (an HMAC, so a record planted by anyone else who can write the
folder is not served). What is at a record's path but cannot be one comes back from ``get``
as an ``Unreadable`` text, which ``planrecord.decode`` refuses (a miss, replaced and
reported); ``unusable`` says why plans cannot be kept.

The key covers the ws_solver source that can change a plan (``code_version``), so editing
the heuristic or the model invalidates old entries without a version bump. Provenance that
cannot change a plan (TTGIR line numbers, Python source locations) is left out, so moving a
kernel within its file still hits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ..core import cachefiles, readers

ENV_DIR = "WS_SOLVER_CACHE_DIR"
# Bump when the stored record changes shape (ws_solver.pipeline.planrecord); 3: records name
# their key.
FORMAT = 3

# Fields that only say where something came from.
_PROVENANCE = frozenset({"line", "location", "meta"})
# Options that change whether the cache is used, not what is solved.
_NOT_KEYED = frozenset({"cache", "wall_clock"})
# Source that decides plans: everything but the drop-in, reports and the CLI.
_PLAN_SOURCES = ("core", "ir", "model", "heuristic", "encode", "pipeline")

_memory: dict[tuple[str, str], str] = {}
# Signs records where the folder's key cannot be used (they then hold in this process only).
_PROCESS_KEY = secrets.token_bytes(32)


class Unreadable(str):
    """What ``get`` returns for a file at a record's path that cannot be a record (a FIFO, a
    link, too large): empty text that says why in ``problem``."""

    problem: str

    def __new__(cls, problem: str) -> Unreadable:
        text = super().__new__(cls, "")
        text.problem = problem
        return text


def cache_dir() -> Path:
    """Where plan files live: ``$WS_SOLVER_CACHE_DIR`` or ``~/.cache/ws_solver/plans``."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ws_solver" / "plans"


def key_for(graph: Any, target: Any, strategy: str, options: Any) -> str:
    """Hex digest naming the plan of ``graph`` on ``target`` under ``strategy``/``options``."""
    record = {
        "format": FORMAT,
        "graph": canonical(graph, skip=_PROVENANCE),
        "target": canonical(target),
        "strategy": strategy,
        "options": canonical(options, skip=_NOT_KEYED),
        "code": code_version(),
    }
    return digest(record)


def get(key: str) -> str | None:
    """The stored record text for ``key``, from memory or disk; None on a miss; an
    ``Unreadable`` when what is there cannot be a record. The text is checked by
    ``planrecord.decode`` (a torn or foreign file is a bad record, reported and replaced)."""
    where = str(cache_dir())
    hit = _memory.get((where, key))
    if hit is not None:
        return hit
    try:
        text = cachefiles.read_text(_path(key))
    except cachefiles.BadFile as e:
        return Unreadable(str(e))
    if text is not None:
        _memory[(where, key)] = text
    return text


def sign(body: Any) -> str:
    """The record signature of ``body`` (its canonical JSON) under the cache folder's key,
    made when there is none yet."""
    return cachefiles.sign(_key(create=True), _canonical_text(body))


def signed(body: Any, mac: object) -> bool:
    """Whether ``mac`` is ``body``'s signature under the cache folder's key."""
    return cachefiles.same(mac, cachefiles.sign(_key(create=False), _canonical_text(body)))


def unusable() -> str:
    """Why plans cannot be kept in the cache folder ("" when they can): it cannot be made or
    written, or its key cannot be trusted."""
    where = cache_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"it cannot be made ({e.strerror or e})"
    if not where.is_dir():
        return "it is not a folder"
    if not os.access(where, os.W_OK | os.X_OK):
        return "it cannot be written (permission denied)"
    try:
        cachefiles.folder_key(where, create=True)
    except cachefiles.BadFile as e:
        return str(e)
    return ""


def _key(create: bool) -> bytes:
    try:
        key = cachefiles.folder_key(cache_dir(), create)
    except (cachefiles.BadFile, OSError):
        key = None
    return key if key is not None else _PROCESS_KEY


def _canonical_text(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)


def put(key: str, plan_json: str) -> None:
    """Store ``plan_json`` under ``key`` (memory always; disk when it is writable)."""
    readers.loads(plan_json)  # refuse to store what get() would treat as a miss
    where = cache_dir()
    _memory[(str(where), key)] = plan_json
    made = not where.exists()
    try:
        where.mkdir(parents=True, exist_ok=True)
        _write_atomic(_path(key), plan_json)
    except OSError as e:  # a read-only or full disk costs a re-solve in the next process
        if made:
            cachefiles.remove_if_empty(where)
        cachefiles.say_unwritable("plan cache", where, e, "plans")


def discard(key: str) -> None:
    """Forget ``key``: its in-memory copy and its file (a record found to be bad)."""
    _memory.pop((str(cache_dir()), key), None)
    with contextlib.suppress(OSError):  # a read-only cache keeps it; readers find it bad too
        _path(key).unlink(missing_ok=True)


def clear_memory() -> None:
    """Forget the in-memory copies (the files stay)."""
    _memory.clear()


@cache
def code_version(parts: tuple[str, ...] = _PLAN_SOURCES) -> str:
    """Package version plus a digest of the ws_solver sources named by ``parts`` (folders or
    files of the package; a part that is not there is an error, not an empty digest)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(_package_version().encode())
    for part in parts:
        base = root / part
        if not base.exists():
            raise FileNotFoundError(f"ws_solver: no {base} to key plans by")
        files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
        for f in files:
            if f.is_file():
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
    return f"{_package_version()}+{h.hexdigest()[:16]}"


def digest(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return hashlib.sha256(_canonical_text(obj).encode()).hexdigest()


def canonical(obj: Any, skip: frozenset[str] = frozenset()) -> Any:
    """JSON-ready form of dataclasses, enums, mappings and sequences; ``skip`` names fields
    to leave out of every dataclass on the way down."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            f.name: canonical(getattr(obj, f.name), skip)
            for f in dataclasses.fields(obj)
            if f.compare and f.name not in skip
        }
    if isinstance(obj, enum.Enum):
        return canonical(obj.value, skip)
    if isinstance(obj, Mapping):
        return {str(k): canonical(v, skip) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        items = [canonical(v, skip) for v in obj]
        return sorted(items, key=repr) if isinstance(obj, set | frozenset) else items
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return repr(obj)


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def _write_atomic(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("ws-solver")
    except Exception:  # not installed (PYTHONPATH=.): the sources digest still keys it
        return "0"

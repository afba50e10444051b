"""The compile log: the drop-in's reports as JSON lines in one file, appended by every process
that compiles (``enable(report_file=...)``, ``WS_SOLVER_REPORT``), read back by
``ws-solver reports``.

One record per line, a JSON object with ``schema``, ``version``, ``event``, ``pid``, ``ppid``,
``time`` (UTC), ``triton`` (the installed version) and:

- ``"compile"``: ``kernel``, ``capability``, ``hash`` (Triton's cache key of the compile, as
  its cache folder is named from it), ``report`` (``CompileReport.to_dict()``);
- ``"enabled"``: the process switched ws_solver on from the environment: ``strategy``,
  ``settings`` (``Settings`` as data), ``argv``;
- ``"off"``: the environment asked for ws_solver and the process left it off: ``variable``
  and ``reason``.

Appends are safe from many processes and threads at once: each record is one ``write`` of
the whole line to a descriptor opened with ``O_APPEND``, under an exclusive ``flock`` (which
also covers file systems where ``O_APPEND`` alone is not atomic, if they support locks).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import sys
import time
from dataclasses import dataclass
from typing import Any

from ...core import readers
from .decision_check import NOT_BUILT

SCHEMA = "ws-solver.compile-log"
VERSION = 1
EVENTS = ("compile", "enabled", "off")


class CompileLogError(ValueError):
    """A line of a compile log that is not one of its records (``file:line: why``)."""


def process_fields(event: str) -> dict:
    """The fields every record has."""
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "event": event,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "triton": _triton_version(),
    }


def compile_record(report: Any, triton_hash: str | None) -> dict:
    """The record of one compile (a ``CompileReport``)."""
    data = report.to_dict()
    return {
        **process_fields("compile"),
        "kernel": data["kernel"],
        "capability": data["capability"],
        "hash": triton_hash,
        "report": data,
    }


def append(path: str | os.PathLike, record: dict) -> None:
    """Append ``record`` as one line (OSError if the file cannot be written)."""
    data = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
    # O_NONBLOCK: a FIFO at the path fails at once (no reader) or is refused below, never
    # waited on; O_NOCTTY: a terminal does not become ours.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    fd = os.open(path, flags, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        os.set_blocking(fd, True)
        _lock(fd)
        view = memoryview(data)
        while view:  # one write for a regular file; the loop only covers a short write
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)  # releases the lock


def check_path(value: Any, name: str) -> str | None:
    """A log file to append to: None, or a path whose folder exists and can be written
    (ValueError naming ``name`` otherwise; nothing is created here)."""
    if value is None:
        return None
    try:
        path = os.fsdecode(os.fspath(value))
    except TypeError:
        raise ValueError(f"{name} must be a path, not {type(value).__name__}") from None
    if not path or "\0" in path:
        raise ValueError(f"{name} {path!r} is not a path")
    full = os.path.abspath(path)
    folder = os.path.dirname(full)
    if os.path.isdir(full):
        raise ValueError(f"{name} {path!r} is a folder; name a file in it")
    if os.path.lexists(full) and not os.path.isfile(full):
        raise ValueError(f"{name} {path!r} is not a regular file (a FIFO, a device?)")
    if not os.path.isdir(folder):
        raise ValueError(f"{name} {path!r}: its folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) and not os.access(full, os.W_OK):
        raise ValueError(f"{name} {path!r} cannot be written")
    return full


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: O_APPEND alone
        return
    with contextlib.suppress(OSError):  # a file system without locks: O_APPEND alone
        fcntl.flock(fd, fcntl.LOCK_EX)


def _triton_version() -> str | None:
    module = sys.modules.get("triton")
    return getattr(module, "__version__", None)


# -- reading ----------------------------------------------------------------------------------
def read(path: str | os.PathLike) -> list[dict]:
    """Every record of the log at ``path``, read a line at a time through the one bounded
    reader (``core.readers``); ``CompileLogError`` naming the file (not a regular file, too
    large) or the file and line of the first line that is not a record, FileNotFoundError or
    IsADirectoryError."""
    name = os.fspath(path)
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, "a folder", name)
    records = []
    try:
        for number, data in enumerate(readers.lines(name), start=1):
            line = data.decode("utf-8", errors="replace")
            if line.strip():
                records.append(parse_line(line, f"{name}:{number}"))
    except readers.BadFile as e:
        raise CompileLogError(f"{name}: cannot read: {e}") from None
    return records


def parse_line(line: str, where: str) -> dict:
    """One line as a record, checked (every field the summary reads of its type):
    CompileLogError naming ``where`` otherwise."""
    try:
        record = readers.loads(line)
    except readers.BadJSON as e:
        cut = "" if line.endswith("\n") else " (a cut-off last line?)"
        raise CompileLogError(f"{where}: {str(e).removeprefix('it is ')}{cut}") from None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise CompileLogError(f"{where}: not a ws_solver compile-log record (no {SCHEMA!r})")
    version = record.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise CompileLogError(
            f"{where}: record version {version!r}; this ws_solver reads up to {VERSION}"
        )
    event = record.get("event")
    if event not in EVENTS:
        raise CompileLogError(f"{where}: unknown event {event!r} (known: {', '.join(EVENTS)})")
    if event == "compile" and not isinstance(record.get("report"), dict):
        raise CompileLogError(f"{where}: a compile record without its report")
    _check_types(record, _RECORD_TYPES, where, "")
    if event == "compile":
        report = record["report"]
        _check_types(report, _REPORT_TYPES, where, "report.")
        _check_types(report.get("decision") or {}, _DECISION_TYPES, where, "report.decision.")
        stock = (report.get("decision") or {}).get("stock") or {}
        _check_types(stock, _STOCK_TYPES, where, "report.decision.stock.")
        for loop in report.get("loops") or []:
            if isinstance(loop, dict):
                _check_types(loop, _LOOP_TYPES, where, "report.loops[].")
    return record


# The fields the summary reads, and the types it reads them as (absent or null: a default).
_NUMBER = (int, float)
_RECORD_TYPES: dict[str, tuple[type, ...]] = {"pid": (int,), "reason": (str,), "report": (dict,)}
_REPORT_TYPES: dict[str, tuple[type, ...]] = {
    "kernel": (str,),
    "capability": (int,),
    "strategy_asked": (str,),
    "strategy_used": (str,),
    "loops": (list,),
    "fallbacks": (list,),
    "decision": (dict,),
    "wall_s": _NUMBER,
    "notes": (list,),
}
_DECISION_TYPES: dict[str, tuple[type, ...]] = {
    "rule": (str,),
    "specialized": (bool,),
    "stock": (dict,),
}
_STOCK_TYPES: dict[str, tuple[type, ...]] = {"status": (str,), "specialized": (bool,)}
_LOOP_TYPES: dict[str, tuple[type, ...]] = {"strategy": (str,), "partitions": (list,)}


def _check_types(fields: dict, types: dict[str, tuple[type, ...]], where: str, at: str) -> None:
    for name, allowed in types.items():
        value = fields.get(name)
        if value is None:
            continue
        wrong = isinstance(value, bool) and bool not in allowed
        if wrong or not isinstance(value, allowed):
            kind = " or ".join(t.__name__ for t in allowed)
            raise CompileLogError(f"{where}: {at}{name} is {json.dumps(value)[:40]}, not {kind}")
        if allowed is _NUMBER and not _finite(value):
            raise CompileLogError(f"{where}: {at}{name} is not a finite number")


def _finite(value: float) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


# -- summarizing ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One compile, as the summary table shows it."""

    pid: int
    kernel: str
    capability: int
    asked: str
    used: str
    plans: str  # per WS loop: "3p" (partitions of a specialized plan), "-" (unspecialized)
    fallbacks: int
    decision: str  # "specialized", "unspecialized" or "" (not known)
    # Stock Triton's decision (the decision check built it): "same" as ``decision``, the other
    # one, "failed (...)", or "" when it was not built.
    stock: str
    rule: str  # the decision check's rule, "" when it did not run
    wall_s: float
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    enabled_pids: tuple[int, ...]  # processes that switched on from the environment
    off: tuple[tuple[int, str], ...]  # (pid, reason) of processes that stayed off


def summarize(records: list[dict]) -> Summary:
    rows = tuple(row(r) for r in records if r["event"] == "compile")
    enabled = tuple(sorted({int(r.get("pid") or 0) for r in records if r["event"] == "enabled"}))
    off = tuple(
        (int(r.get("pid") or 0), str(r.get("reason") or "")) for r in records if r["event"] == "off"
    )
    return Summary(rows, enabled, off)


def row(record: dict) -> Row:
    report = record["report"]
    decision = report.get("decision") or {}
    final = _decision(report, decision)
    stock = _stock_decision(decision)
    return Row(
        pid=int(record.get("pid") or 0),
        kernel=str(report.get("kernel", "?")),
        capability=int(report.get("capability", 0) or 0),
        asked=str(report.get("strategy_asked", "")),
        used=str(report.get("strategy_used", "")),
        plans=_plans(report.get("loops") or []),
        fallbacks=len(report.get("fallbacks") or []),
        decision=final,
        stock="same" if stock and stock == final else stock,
        rule=str(decision.get("rule", "")),
        wall_s=float(report.get("wall_s", 0.0) or 0.0),
        notes=tuple(str(n) for n in report.get("notes") or []),
    )


def _decision(report: dict, decision: dict) -> str:
    """The decision kept: the decision check's, else what Triton lowered ("" for stock's own
    stages, which the drop-in does not look into)."""
    if "specialized" in decision:
        return "specialized" if decision["specialized"] else "unspecialized"
    if report.get("strategy_used") == "stock":
        return ""
    return "specialized" if report.get("lowered") else "unspecialized"


def _stock_decision(decision: dict) -> str:
    stock = decision.get("stock") or {}
    if stock.get("status") == "ok" and "specialized" in stock:
        return "specialized" if stock["specialized"] else "unspecialized"
    if stock.get("status") not in (None, "ok", "unavailable", NOT_BUILT["status"]):
        return f"failed ({stock['status']})"
    return ""


def _plans(loops: list) -> str:
    parts = []
    for loop in loops:
        if not isinstance(loop, dict):
            continue
        if loop.get("strategy") == "triton" and "partitions" not in loop:
            parts.append("triton")
        elif loop.get("specialized"):
            parts.append(f"{len(loop.get('partitions') or [])}p")
        else:
            parts.append("-")
    return " ".join(parts) or "-"

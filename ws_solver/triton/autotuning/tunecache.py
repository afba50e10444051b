"""Tuning choices on disk, so that another process does not tune the same call again.

One JSON file (the ``TuningReport``) per key under ``$WS_SOLVER_CACHE_DIR/tuning`` (default
``~/.cache/ws_solver/tuning``), written atomically. The key covers everything that can change
which candidate is fastest or what it builds: the kernel's source (with the functions it
calls), the call key (key arguments, constexprs, options, dtypes), the GPU's name, the Triton
version, the ws_solver sources that change binaries, the candidates, the reference and the
drop-in options.

Records are read as data (``ws_solver.core.cachefiles``): regular files of bounded size, signed
with the folder's secret (an HMAC: a record planted by anyone else who can write the folder
is not served), naming the key they were stored under, and checked against the call they
answer (``check``: the kernel, the call key, a winner that is a candidate the tuning found
correct, every field of its type). A bad record is a ``BadChoice``: the caller tunes again,
overwrites it and says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...core import cachefiles, readers
from ...pipeline import plancache
from ..dropin.session import _SOURCES_THAT_CHANGE_BINARIES
from .tuning import Outcome, TuningReport

FORMAT = 2  # 2: signed records that name their key
# Statuses of a candidate that built and agreed with the reference (a winner must have one).
CORRECT = ("timed", "untimed")


class BadChoice(ValueError):
    """A stored tuning choice that cannot be used (the message says why)."""


def cache_dir() -> Path:
    env = os.environ.get(plancache.ENV_DIR)
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "ws_solver"
    return base / "tuning"


def key_for(
    identity: Mapping[str, Any],
    call_key: Sequence[str],
    candidates: Sequence[str],
    reference: str,
    options: Mapping[str, Any],
) -> str:
    """Hex digest naming one tuning choice. ``identity``: the kernel's ``name`` and ``source``
    hash, the ``device`` name and the ``triton`` version (from the launcher)."""
    record = {
        "format": FORMAT,
        "kernel": identity.get("name"),
        "source": identity.get("source"),
        "device": identity.get("device"),
        "triton": identity.get("triton"),
        "ws_solver": plancache.code_version(_SOURCES_THAT_CHANGE_BINARIES),
        "key": list(call_key),
        "candidates": list(candidates),
        "reference": reference,
        "options": plancache.canonical(dict(options)),
    }
    return plancache.digest(record)


def load(key: str) -> dict | None:
    """The report stored under ``key``: None when there is none; ``BadChoice`` when the file
    there is not a signed record of that key."""
    try:
        text = cachefiles.read_text(_path(key))
        if text is None:
            return None
        record = readers.loads(text)
    except (cachefiles.BadFile, readers.BadJSON) as e:  # also not JSON, or nested too deep
        raise BadChoice(str(e)) from None
    if not isinstance(record, dict) or set(record) != {"for", "report", "mac"}:
        raise BadChoice("it is not a tuning record")
    body = {"for": record["for"], "report": record["report"]}
    try:
        mac = cachefiles.sign(_key(create=False), _text(body))
    except cachefiles.BadFile as e:
        raise BadChoice(str(e)) from None
    if not cachefiles.same(record["mac"], mac):
        raise BadChoice("its signature does not match its content")
    if record["for"] != key:
        raise BadChoice("it was stored under another key")
    if not isinstance(record["report"], dict):
        raise BadChoice("its report is not a mapping")
    return record["report"]


def check(
    data: Mapping[str, Any],
    kernel: str,
    call_key: Sequence[str],
    candidates: Sequence[str],
    reference: str,
) -> TuningReport:
    """The ``TuningReport`` in ``data`` if it is a tuned choice for ``kernel`` at
    ``call_key`` among ``candidates``; ``BadChoice`` saying why not."""
    report = _report(data)
    if report.kernel != kernel or report.key != list(call_key):
        raise BadChoice(f"it is for {report.kernel} [{', '.join(map(str, report.key))}]")
    if not report.tuned:
        raise BadChoice("it was not tuned")
    names = [c.name for c in report.candidates]
    if names != list(candidates):
        raise BadChoice(f"its candidates are {names}, not {list(candidates)}")
    correct = [c.name for c in report.candidates if c.status in CORRECT]
    if report.winner not in correct and (correct or report.winner != reference):
        outcome = report.outcome(report.winner)
        what = f"{outcome.status} in the tuning" if outcome else "not a candidate"
        raise BadChoice(f"its winner {report.winner} is {what}")
    return report


def store(key: str, report: Mapping[str, Any]) -> None:
    """Write the choice (a read-only or full disk only costs a retune in the next process)."""
    where = cache_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
        body = {"for": key, "report": readers.loads(json.dumps(dict(report)))}
        record = {**body, "mac": cachefiles.sign(_key(create=True), _text(body))}
        plancache._write_atomic(_path(key), json.dumps(record, indent=1, sort_keys=True))
    except (OSError, cachefiles.BadFile) as e:
        cachefiles.say_unwritable("tuning cache", where, e, "tuning choices")


def _report(data: Mapping[str, Any]) -> TuningReport:
    """``data`` as a TuningReport, every field of its declared type."""
    fields = dict(data)
    outcomes = fields.pop("candidates", None)
    fields.setdefault("extra_bytes", 0)  # a record from before measured mode
    _require(fields, _REPORT_TYPES, "its report")
    if not isinstance(fields["key"], list) or not all(isinstance(k, str) for k in fields["key"]):
        raise BadChoice("its report's key is not a list of text")
    if not isinstance(outcomes, list):
        raise BadChoice("its report's candidates are not a list")
    parsed = []
    for entry in outcomes:
        if not isinstance(entry, dict):
            raise BadChoice("a candidate of its report is not a mapping")
        entry = {k: v for k, v in entry.items() if k != "median_ms"}
        _require(entry, _OUTCOME_TYPES, "a candidate of its report", optional=True)
        if "name" not in entry:
            raise BadChoice("a candidate of its report has no name")
        ms = entry.get("ms", [])
        if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in ms):
            raise BadChoice("a candidate of its report has times that are not numbers")
        parsed.append(Outcome(**entry))
    return TuningReport(**fields, candidates=parsed)


_REPORT_TYPES: dict[str, tuple[type, ...]] = {
    "kernel": (str,),
    "key": (list,),
    "winner": (str,),
    "device": (str,),
    "reference": (str,),
    "tuned": (bool,),
    "cached": (bool,),
    "note": (str,),
    "rounds": (int,),
    "compile_s": (int, float),
    "check_s": (int, float),
    "bench_s": (int, float),
    "total_s": (int, float),
    "extra_bytes": (int,),
}
_OUTCOME_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "status": (str,),
    "binary": (str, type(None)),
    "same_as": (str, type(None)),
    "strategy_used": (str, type(None)),
    "reason": (str,),
    "compile_s": (int, float),
    "ms": (list,),
}


def _require(
    fields: dict, types: dict[str, tuple[type, ...]], what: str, optional: bool = False
) -> None:
    unknown = set(fields) - set(types)
    if unknown:
        raise BadChoice(f"{what} has unknown fields {sorted(unknown)}")
    for name, allowed in types.items():
        if name not in fields:
            if optional:
                continue
            raise BadChoice(f"{what} has no {name}")
        value = fields[name]
        wrong_bool = isinstance(value, bool) and bool not in allowed
        if wrong_bool or not isinstance(value, allowed):
            raise BadChoice(f"{what}'s {name} is a {type(value).__name__}")


def _key(create: bool) -> bytes:
    """The tuning folder's secret (BadFile when it cannot be trusted or made)."""
    key = cachefiles.folder_key(cache_dir(), create)
    if key is None:
        raise cachefiles.BadFile("the folder has no key")
    return key


def _text(body: Any) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"

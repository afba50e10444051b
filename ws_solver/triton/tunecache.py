"""Tuning choices on disk, so that another process does not tune the same call again.

One JSON file (the ``TuningReport``) per key under ``$WS_SOLVER_CACHE_DIR/tuning`` (default
``~/.cache/ws_solver/tuning``), written atomically. The key covers everything that can change
which candidate is fastest or what it builds: the kernel's source (with the functions it
calls), the call key (key arguments, constexprs, options, dtypes), the GPU's name, the Triton
version, the ws_solver sources that change binaries, the candidates, the reference and the
drop-in options. A torn or foreign file is a miss.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import plancache
from .session import _SOURCES_THAT_CHANGE_BINARIES

FORMAT = 1


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
    try:
        data = json.loads(_path(key).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("winner") else None


def store(key: str, report: Mapping[str, Any]) -> None:
    """Write the choice (a read-only or full disk only costs a retune in the next process)."""
    where = cache_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
        plancache._write_atomic(_path(key), json.dumps(report, indent=1, sort_keys=True))
    except OSError:
        pass


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"

"""The Triton versions the drop-in supports, and what differs between them.

Every supported version runs the same loop passes around the partitioner input point
(``warp_specialize``, ``pipeline``, ``optimize_partition_warps``); what differs is the head
of ``make_ttgir`` (how CTA layouts are planned) and its tail (a few passes added in 3.9).
Each difference is a named flag of the one release table (``ws_solver.core.triton_releases``,
which the model's lowering rules read too), read by ``make_ttgir.py``: one code path, not one
per version. A version not in the table is refused with one line naming the supported ones.
The installed Triton is resolved once per process (``installed``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from importlib import metadata
from typing import Any

from ...core.triton_releases import (
    DEFAULT_TRITON,
    RELEASES,
    TritonRelease,
    find_release,
    release_of,
    supported_names,
)

TritonVersion = TritonRelease  # the drop-in's name for a row
SUPPORTED = RELEASES


# From this release on, Triton's partition scheduler is PR #7312's data-flow-graph partitioner,
# the algorithm ws_solver's heuristic ports (3.6's is an older one).
SEED_SCHEDULER_SINCE = (3, 7)


def has_seed_scheduler(version: str) -> bool:
    """Whether Triton ``version``'s partition scheduler is the seed's (ValueError: unreadable)."""
    major, minor = (int(x) for x in release_of(version).split(".")[:2])
    return (major, minor) >= SEED_SCHEDULER_SINCE


class UnsupportedTritonVersion(RuntimeError):
    """The installed Triton is not one the drop-in's pass lists were checked against."""


def lookup(version: str) -> TritonVersion:
    """The table row for ``version`` (a ``triton.__version__`` string), or a one-line error."""
    row = find_release(version)
    if row is None:
        raise UnsupportedTritonVersion(
            f"Triton {version} is not supported by ws_solver's drop-in "
            f"(supported: {supported_names()}); install one of them, e.g. "
            f"pip install 'triton=={list(SUPPORTED)[-1]}'"
        )
    return row


@functools.cache
def installed() -> TritonVersion:
    """The row of the Triton that is installed, resolved once per process (imports triton;
    an unsupported one raises every time, nothing is cached)."""
    import triton

    return lookup(triton.__version__)


def planning_version() -> str:
    """The release whose lowering rules plans follow by default: the installed Triton's when
    it is supported, else 3.6.0 (reads the package metadata; does not import triton)."""
    try:
        return lookup(metadata.version("triton")).name
    except (metadata.PackageNotFoundError, UnsupportedTritonVersion):
        return DEFAULT_TRITON


StagesInstall = Callable[[Any, dict, Any, Any, Any], None]


def stages_hook(install: StagesInstall, key: str | Callable[[], str]) -> Callable[..., Any]:
    """A ``knobs.runtime.add_stages_inspection_hook`` for every supported version.

    3.6 calls the hook once per compile with ``(backend, stages, options, language,
    capability)``; 3.9 also calls it with no arguments, before compiling, for a
    ``(key, hash)`` pair that it adds to its cache keys, so that kernels compiled through
    different hooks do not share a cache entry. ``key`` (or ``key()``) names what ``install``
    does to the stages.
    """

    def hook(*args: Any) -> Any:
        if not args:
            text = key() if callable(key) else key
            return text, hashlib.sha256(text.encode()).hexdigest()
        install(*args)
        return None

    return hook


def hook_key(hook: Callable[..., Any] | None) -> str:
    """The cache key a (3.9-style) hook gives, or "" for none or a 3.6-style hook."""
    if hook is None:
        return ""
    try:
        return str(hook()[0])
    except TypeError:
        return ""

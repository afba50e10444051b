"""The Triton versions the drop-in supports, and what differs between them (one small table).

Every supported version runs the same loop passes around the partitioner input point
(``warp_specialize``, ``pipeline``, ``optimize_partition_warps``); what differs is the head
of ``make_ttgir`` (how CTA layouts are planned) and its tail (a few passes added in 3.9).
Each difference is a named flag here, read by ``make_ttgir.py``: one code path, not one per
version. A version not in the table is refused with one line naming the supported ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from ...model.lowering_facts import DEFAULT_TRITON, lowering_facts, release_of


@dataclass(frozen=True)
class TritonVersion:
    """What ws_solver needs to know about one Triton release's NVIDIA ``make_ttgir``."""

    name: str
    # Head: 3.6 plans CTA layouts in one pass (plan_cta); 3.9 assigns CGA layouts, then
    # optimizes CTA locality (two passes with a layout cleanup between) and checks 2-CTA MMAs.
    cga_layouts: bool
    # Head: 3.9 can convert persistent kernels to cluster launch control (the ``clc`` option).
    clc: bool
    # Tail: 3.6 runs prefetch on every target, 3.9 on sm_80 only (so never on ours); 3.9 also
    # reduces TMEM loads, lowers cluster launch control on sm_100 and hoists mbarrier
    # init/inval out of loops.
    prefetch: bool
    tmem_load_reduce: bool
    lower_clc: bool
    hoist_mbarrier_lifecycle: bool
    # The corpus folder holding this version's TTGIR at the partitioner input point.
    corpus_dir: str

    @property
    def inserts_default_partition(self) -> bool:
        """3.9 on sm_100: partition 0 is the default warp group and holds neither a TMA load
        nor an MMA. A plan whose partition 0 holds one is lowered with an empty default
        partition inserted before the plan's, which shift by one (the assignment is kept;
        found by moving single ops of annotated corpus loops and reading the IR after
        partition scheduling). The model's lowering facts hold it (and forbid such plans)."""
        return lowering_facts(self.name).inserts_default_partition

    def extra_default_partition(self, capability: int) -> int:
        """How many partitions Triton adds in front of a plan whose partition 0 holds a TMA
        load or an MMA (0 or 1)."""
        return int(self.inserts_default_partition and capability >= 100)


SUPPORTED: dict[str, TritonVersion] = {
    "3.6.0": TritonVersion(
        name="3.6.0",
        cga_layouts=False,
        clc=False,
        prefetch=True,
        tmem_load_reduce=False,
        lower_clc=False,
        hoist_mbarrier_lifecycle=False,
        corpus_dir="ttgir",
    ),
    "3.9.0": TritonVersion(
        name="3.9.0",
        cga_layouts=True,
        clc=True,
        prefetch=False,
        tmem_load_reduce=True,
        lower_clc=True,
        hoist_mbarrier_lifecycle=True,
        corpus_dir="ttgir-3.9",
    ),
}


# From this release on, Triton's partition scheduler is PR #7312's data-flow-graph partitioner,
# the algorithm ws_solver's heuristic ports (3.6's is an older one).
SEED_SCHEDULER_SINCE = (3, 7)


def has_seed_scheduler(version: str) -> bool:
    """Whether Triton ``version``'s partition scheduler is the seed's (ValueError: unreadable)."""
    major, minor = (int(x) for x in release_of(version).split(".")[:2])
    return (major, minor) >= SEED_SCHEDULER_SINCE


class UnsupportedTritonVersion(RuntimeError):
    """The installed Triton is not one the drop-in's pass lists were checked against."""


def supported_names() -> str:
    return ", ".join(SUPPORTED)


def lookup(version: str) -> TritonVersion:
    """The table row for ``version`` (a ``triton.__version__`` string), or a one-line error."""
    release = release_of(version)
    if release not in SUPPORTED:
        raise UnsupportedTritonVersion(
            f"Triton {version} is not supported by ws_solver's drop-in "
            f"(supported: {supported_names()}); install one of them, e.g. "
            f"pip install 'triton=={list(SUPPORTED)[-1]}'"
        )
    return SUPPORTED[release]


def installed() -> TritonVersion:
    """The row of the Triton that is installed (imports triton)."""
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

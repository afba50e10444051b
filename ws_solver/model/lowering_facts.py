"""What each supported Triton release's warp-specialization lowering accepts, as the model
reads it: the rows of the one release table (`ws_solver/core/triton_releases.py`, which the
drop-in's `triton/toolchain/versions.py` reads too), each difference a named flag that
`lowering.py` reads. A version not in the table is refused with one line naming the
supported ones.
"""

from __future__ import annotations

from ..core.triton_releases import DEFAULT_TRITON, find_release, release_of, supported_names
from ..core.triton_releases import RELEASES as LOWERING
from ..core.triton_releases import TritonRelease as LoweringFacts

__all__ = ["DEFAULT_TRITON", "LOWERING", "LoweringFacts", "lowering_facts", "release_of"]


def lowering_facts(version: str) -> LoweringFacts:
    """The row of ``version`` ("3.9.0", or a build such as "3.9.0+git..."); ValueError,
    one line naming the supported versions, for any other."""
    row = find_release(version)
    if row is None:
        raise ValueError(
            f"Triton {version}: no lowering rules for it (supported: {supported_names()})"
        )
    return row

"""The guard child's lowering taken by the compile's own stages (issue 49: the kept module is
lowered once). The decision check's build lowers the module the compile keeps to TTGIR, LLVM
IR and PTX in the guard's child (`guard.server.Lowering`); the compile's ttgir, llir and ptx
stages hand those texts on, with the metadata each stage sets, instead of lowering the same
module again. Where the child's lowering may differ from this process's, it is not taken.
"""

from __future__ import annotations

from ..guard.client import Lowering, Verdict
from ..toolchain import lowering_env

LOWERED_ONCE = "lowered once: the decision check's TTGIR, LLVM IR and PTX"


def taken(lowering: Lowering | None, verdict: Verdict | None, own_stages: bool) -> Lowering | None:
    """``lowering`` where this process's stages would make the same of the module: the
    child's build succeeded and printed nothing (a diagnostic belongs to this process's
    output), Triton calls the drop-in's own ttgir, llir and ptx stages (``own_stages``: no
    other hook wraps them), and both processes read the same knobs and hooks."""
    if lowering is None or verdict is None or not verdict.ok or verdict.stderr:
        return None
    if not own_stages or _relocates():
        return None
    return lowering if lowering.environment == lowering_env.fingerprint() else None


def _relocates() -> bool:
    """Triton gives the ttgir stage's module new locations (USE_IR_LOC): that needs the
    module itself, and the child's LLVM IR would have the old ones."""
    from triton import knobs

    return bool(knobs.compilation.use_ir_loc)

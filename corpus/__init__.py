"""Kernel corpus: Triton kernels written for ws_solver and their dumped TTGIR."""

from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def ttgir_dir(version: str | None = None) -> Path:
    """The dumps Triton ``version`` reads (default: the installed Triton): ``corpus/ttgir``
    for 3.6.0 (and without Triton), ``corpus/ttgir-3.9`` for 3.9.0. Text handed to Triton
    must come from here."""
    if version is not None:
        from ws_solver.triton.toolchain.versions import lookup

        return _ROOT / lookup(version).corpus_dir
    try:
        from ws_solver.triton.toolchain.versions import installed

        return _ROOT / installed().corpus_dir
    except ImportError:
        return _ROOT / "ttgir"

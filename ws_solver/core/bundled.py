"""Where the bundled corpus is: the TTGIR dumps (and their index.json of stock records) that
ship with ws_solver, one folder per supported Triton release.

An installed wheel holds them as package data, ws_solver/data/corpus/ttgir*/ (setup.py copies
them there); an editable install reads the checkout's corpus/ttgir*/. `corpus_path()` is
public as ``ws_solver.corpus_path()``, and ``ws-solver corpus`` prints it, so that examples
run the same from a checkout and from an installed wheel in any folder.
"""

from __future__ import annotations

from importlib import metadata, resources
from pathlib import Path

from .failures import ReportedError
from .triton_releases import DEFAULT_TRITON, find_release, supported_names


def packaged_corpus() -> Path:
    """Where a wheel holds the bundled corpus; absent in a checkout, whose one copy stays in
    corpus/."""
    return Path(str(resources.files("ws_solver"))) / "data" / "corpus"


def planning_release(triton: str | None = None) -> str:
    """The Triton release `triton` names ("3.9.0", "3.9.0+git..."; ReportedError, exit 2, for
    another), or for None the installed Triton's when it is supported, else 3.6.0 (reads the
    package metadata; does not import triton)."""
    if triton is None:
        try:
            installed = find_release(metadata.version("triton"))
        except metadata.PackageNotFoundError:
            installed = None
        return installed.version if installed is not None else DEFAULT_TRITON
    release = find_release(triton)
    if release is None:
        raise ReportedError(f"Triton {triton}: no bundled corpus (supported: {supported_names()})")
    return release.version


def corpus_path(triton: str | None = None) -> Path:
    """The folder of the corpus dumped by Triton `triton` (ttgir for 3.6.0, ttgir-3.9 for
    3.9.0; None: the release `planning_release` picks): the copy an installed wheel holds,
    else the one of the checkout the package lives in (an editable install). A ReportedError
    (exit 2) names where it looked when neither is there."""
    folder = find_release(planning_release(triton)).corpus_dir
    checkout = Path(__file__).resolve().parents[2]
    candidates = [packaged_corpus() / folder, checkout / "corpus" / folder]
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.ttgir")):
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise ReportedError(f"the bundled corpus is not there (looked in {looked})")

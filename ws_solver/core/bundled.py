"""Where the bundled corpus is: the TTGIR dumps (and their index.json of stock records) that
ship with ws_solver, one folder per supported Triton release.

An installed wheel holds them as package data, ws_solver/data/corpus/ttgir*/ (setup.py copies
them there); an editable install reads the checkout's corpus/ttgir*/. `corpus_path()` is
public as ``ws_solver.corpus_path()``, and ``ws-solver corpus`` prints it, so that examples
run the same from a checkout and from an installed wheel in any folder.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .failures import ReportedError
from .triton_releases import DEFAULT_TRITON, find_release, supported_names


def packaged_corpus() -> Path:
    """Where a wheel holds the bundled corpus; absent in a checkout, whose one copy stays in
    corpus/."""
    return Path(str(resources.files("ws_solver"))) / "data" / "corpus"


def corpus_path(triton: str = DEFAULT_TRITON) -> Path:
    """The folder of the corpus dumped by Triton `triton` (ttgir for 3.6.0, the default of
    `ws_solver.compare` and `ws_solver.explore` too; ttgir-3.9 for 3.9.0): the copy an
    installed wheel holds, else the one of the checkout the package lives in (an editable
    install). A ReportedError (exit 2) for an unsupported release, or naming where it looked
    when neither copy is there."""
    release = find_release(triton)
    if release is None:
        raise ReportedError(f"Triton {triton}: no bundled corpus (supported: {supported_names()})")
    folder = release.corpus_dir
    checkout = Path(__file__).resolve().parents[2]
    candidates = [packaged_corpus() / folder, checkout / "corpus" / folder]
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.ttgir")):
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise ReportedError(f"the bundled corpus is not there (looked in {looked})")

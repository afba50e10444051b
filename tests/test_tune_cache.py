"""The autotune cache reads its records as data (issue 36, item 5): a record of the wrong
shape or types, a winner that is no candidate or that the tuning discarded, a record of
another kernel or key, or one not signed with the folder's key is a miss: tuned again,
overwritten, and said in a warning; never an exception out of the launch, never served."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("triton")

from test_autotune import GOOD, _isolated, launch, make, wrong  # noqa: E402, F401

from ws_solver.core.candidates import REFERENCE  # noqa: E402
from ws_solver.triton.autotuning import autotuner, tunecache  # noqa: E402
from ws_solver.triton.autotuning.autotuner import WSTuningWarning  # noqa: E402

MS = {"heuristic": 1.0, "optimal": 1.0, "none": 2.0}


def tuned_once(kernels=GOOD) -> tuple[Path, dict]:
    """Tune once with the disk cache on: the record's path and its report."""
    tuner, _, _ = make(kernels, MS, cache_results=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WSTuningWarning)
        launch(tuner)
    (path,) = tunecache.cache_dir().glob("*.json")
    return path, json.loads(path.read_text())["report"]


def relaunch(kernels=GOOD):
    """Another process's first launch: (its report, the launches it made, the warnings)."""
    tuner, launcher, _ = make(kernels, MS, cache_results=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch(tuner)
    said = [str(w.message) for w in caught if issubclass(w.category, WSTuningWarning)]
    return autotuner.last_tuning_report(), launcher.launches, said


def key_of(path: Path) -> str:
    return path.name.removesuffix(".json")


def test_a_signed_good_record_is_served() -> None:
    tuned_once()
    report, launches, said = relaunch()
    assert report.cached and launches == [report.winner] and not said


EDITS = {
    "winner of the wrong type": (lambda r: {**r, "winner": 7}, "winner is a int"),
    "candidates of the wrong type": (lambda r: {**r, "candidates": "heuristic"}, "not a list"),
    "a candidate of the wrong type": (
        lambda r: {**r, "candidates": [1, *r["candidates"][1:]]},
        "not a mapping",
    ),
    "winner not a candidate": (lambda r: {**r, "winner": "triton"}, "is not a candidate"),
    "another kernel": (lambda r: {**r, "kernel": "other"}, "it is for other"),
    "another call key": (lambda r: {**r, "key": ["n=99"]}, "it is for"),
    "not tuned": (lambda r: {**r, "tuned": False}, "not tuned"),
    "unknown field": (lambda r: {**r, "extra": 1}, "unknown fields"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_bad_signed_record_is_tuned_again_and_said(edit: str) -> None:
    """Signed with the folder's key (as a buggy build would write it): still checked."""
    path, report = tuned_once()
    change, says = EDITS[edit]
    tunecache.store(key_of(path), change(report))
    report, launches, said = relaunch()
    assert not report.cached and REFERENCE.name in launches
    assert any("bad cached choice" in s and says in s for s in said), said
    assert json.loads(path.read_text())["report"]["winner"] == report.winner  # overwritten
    assert relaunch()[0].cached


def test_a_winner_the_tuning_discarded_is_not_launched() -> None:
    kernels = {**GOOD, "heuristic": ("h", wrong), "optimal": ("o", wrong)}
    path, report = tuned_once(kernels)
    statuses = {c["name"]: c["status"] for c in report["candidates"]}
    assert statuses["heuristic"] == "discarded" and report["winner"] == "none"
    tunecache.store(key_of(path), {**report, "winner": "heuristic"})
    report, launches, said = relaunch(kernels)
    assert not report.cached and report.winner == "none"
    assert any("winner heuristic is discarded in the tuning" in s for s in said), said


def test_a_record_stored_under_another_key_is_refused(tmp_path: Path) -> None:
    path, report = tuned_once()
    tunecache.store("0" * 64, report)
    (tunecache.cache_dir() / f"{'0' * 64}.json").replace(path)
    _, _, said = relaunch()
    assert any("stored under another key" in s for s in said), said


def test_an_unsigned_or_planted_record_is_refused() -> None:
    path, report = tuned_once()
    record = json.loads(path.read_text())
    record["report"]["winner"] = "none"  # consistent, but not signed with the key
    path.write_text(json.dumps(record))
    report, _, said = relaunch()
    assert not report.cached and report.winner == "heuristic"
    assert any("signature does not match" in s for s in said), said


@pytest.mark.parametrize("what", ["fifo", "link", "torn", "deep"])
def test_what_is_no_record_is_a_miss(what: str) -> None:
    import os

    path, _ = tuned_once()
    path.unlink()
    if what == "fifo":
        os.mkfifo(path)
    elif what == "link":
        path.symlink_to("/dev/zero")
    elif what == "deep":  # valid JSON 5,000 arrays deep: a RecursionError at every launch
        path.write_text("[" * 5000 + "]" * 5000)
    else:
        path.write_text('{"winner": ')
    report, _, said = relaunch()
    assert not report.cached and said
    assert path.is_file() and not path.is_symlink()

"""Issue 50, the caches: every record is read through the one bounded reader and bound to its
key. A record 5,000 arrays deep, a record renamed onto another key's name, a FIFO or deep JSON
among the lowering-probe verdicts, a cache disk that is full: each is a miss that is solved
(tuned, probed) again and repaired, or said once, never a RecursionError, a hang or silence."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_plan_cache_files import again, first_run
from test_plan_records import GEMM, GEMM_36, OPTIONS, graph_of, stored, ws_solver

from ws_solver.core import cachefiles, readers
from ws_solver.model.target import target_for
from ws_solver.pipeline import plancache
from ws_solver.pipeline.partition import plan_loop

DEEP = "[" * 5000 + "]" * 5000


# -- the reader ---------------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=JSON, depth=st.integers(0, 200), brackets=st.sampled_from(["[]", "{}"]))
def test_any_nesting_is_a_value_or_bad_json(value, depth: int, brackets: str) -> None:
    """Wrapped ``depth`` times: the value back, or BadJSON past the cap; never another error
    (a RecursionError came out of 5,000 levels before)."""
    text = json.dumps(value)
    for _ in range(depth):
        text = f'{{"k": {text}}}' if brackets == "{}" else f"[{text}]"
    try:
        found = readers.loads(text)
    except readers.BadJSON as e:
        assert "nests deeper than" in str(e) and depth > readers.MAX_DEPTH - 5
        return
    assert depth <= readers.MAX_DEPTH
    for _ in range(depth):
        found = found["k"] if brackets == "{}" else found[0]
    assert found == value


def test_brackets_in_strings_are_no_nesting() -> None:
    text = json.dumps(["[" * 500 + '\\"{' * 500])
    assert readers.loads(text) == json.loads(text)
    with pytest.raises(readers.BadJSON, match="nests deeper than 64"):
        readers.loads(DEEP)
    with pytest.raises(readers.BadJSON, match="nests deeper"):
        readers.loads(DEEP.encode())


def _within(seconds: float, work):
    """``work()``'s result, or a failure if it blocks (a FIFO opened for reading did)."""
    done: list = []
    thread = threading.Thread(target=lambda: done.append(_outcome(work)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"blocked for more than {seconds} s"
    return done[0]


def _outcome(work):
    try:
        return work()
    except Exception as e:
        return e


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, follow, says in (
        (fifo, False, "not a regular file"),
        (Path("/dev/zero"), True, "not a regular file"),
        (tmp_path, True, "a folder"),
    ):
        found = _within(10, lambda p=path, f=follow: readers.read_bytes(p, 100, follow=f))
        assert isinstance(found, readers.BadFile) and says in str(found), found
        found = _within(10, lambda p=path: list(readers.lines(p)))
        assert isinstance(found, readers.BadFile) and says in str(found), found
    big = tmp_path / "big"
    big.write_bytes(b"x\n" * 100)
    with pytest.raises(readers.BadFile, match="larger than 50 bytes"):
        list(readers.lines(big, limit=50))
    with pytest.raises(readers.BadFile, match="a line longer than 10 bytes"):
        big.write_bytes(b"x" * (2 << 20))
        list(readers.lines(big, line_limit=10))


# -- row 1: a plan record 5,000 arrays deep -----------------------------------------------------
def test_a_deep_plan_record_is_solved_again_and_repaired(tmp_path: Path) -> None:
    """It was rc 3 "internal error: RecursionError" on every run (and, through the drop-in,
    every compile fell back from optimal to heuristic)."""
    cache, out, path = first_run(tmp_path)
    path.write_text(DEEP)
    done = again(cache, out)
    assert done.returncode == 0, done.stderr
    assert "solved again: bad plan-cache record (it nests deeper than" in done.stderr
    assert "from the plan cache" in again(cache, out).stderr  # repaired


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "plans"
    monkeypatch.setenv(plancache.ENV_DIR, str(folder))
    plancache.clear_memory()
    yield folder
    plancache.clear_memory()


def test_a_deep_record_through_plan_loop(cache: Path) -> None:
    graph, target = graph_of(GEMM), target_for("sm_90")
    plan, _, details = plan_loop(graph, target, "heuristic", OPTIONS)
    [path] = cache.glob("*.json")
    for text in (DEEP, '{"plan": ' + "[" * 3000 + "]" * 3000 + "}"):  # deep, or deep inside
        path.write_text(text)
        plancache.clear_memory()
        again_plan, _, details = plan_loop(graph, target, "heuristic", OPTIONS)
        assert details["plan_cache"] == "replaced" and again_plan == plan
        assert "RecursionError" not in details["plan_cache_problem"]


# -- row 4: a signed record renamed onto another key's name -------------------------------------
def test_a_record_renamed_onto_another_key_is_refused(tmp_path: Path) -> None:
    """The heuristic's record, valid and signed, renamed onto the optimal plan's file: it was
    served, and `optimal` emitted the heuristic's plan "from the plan cache"."""
    cache, out = tmp_path / "plans", tmp_path / "out.ttgir"
    args = ("partition", GEMM, *GEMM_36, "-o", out)
    assert ws_solver(*args, "--strategy", "heuristic", cache=cache).returncode == 0
    heuristic, _ = stored(cache)
    heuristic_text = heuristic.read_bytes()
    heuristic.rename(tmp_path / "aside.json")
    assert ws_solver(*args, "--strategy", "optimal", cache=cache).returncode == 0
    optimal, _ = stored(cache)
    optimal.write_bytes(heuristic_text)  # the record renamed onto the other key's name
    done = ws_solver(*args, "--strategy", "optimal", cache=cache)
    assert done.returncode == 0, done.stderr
    assert "from the plan cache" not in done.stderr
    assert "solved again: bad plan-cache record (it was stored under another key" in done.stderr
    assert json.loads(optimal.read_text())["key"] == optimal.name.removesuffix(".json")


def test_the_key_is_part_of_what_is_signed(cache: Path) -> None:
    graph, target = graph_of(GEMM), target_for("sm_90")
    plan_loop(graph, target, "heuristic", OPTIONS)
    path, record = stored(cache)
    other = cache / ("0" * 64 + ".json")
    record["key"] = other.name.removesuffix(".json")  # renamed, its key edited to match
    other.write_text(json.dumps(record))
    plancache.clear_memory()
    from ws_solver.pipeline import planrecord

    with pytest.raises(planrecord.BadRecord, match="checksum does not match"):
        planrecord.decode(plancache.get(record["key"]), graph, target, record["key"])


# -- row 15: a full plan-cache disk -------------------------------------------------------------
def test_a_full_cache_disk_is_said_once(cache: Path, monkeypatch, capfd) -> None:
    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(plancache, "_write_atomic", full)
    monkeypatch.setattr(cachefiles, "_said", set())
    monkeypatch.setattr(cachefiles, "say", cachefiles._to_stderr)  # not the command line's
    target = target_for("sm_90")
    for path in (GEMM, GEMM.with_name("attention_fwd.d64_m128n64_w4_s3.sm90.ttgir")):
        for strategy in ("heuristic", "none", "heuristic"):
            plan_loop(graph_of(path), target, strategy, OPTIONS)
    said = capfd.readouterr().err.splitlines()
    assert said == [
        f"ws_solver: plan cache {cache}: cannot write (No space left on device); plans are not kept"
    ]


def test_a_cache_folder_made_for_nothing_is_removed(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "new" / "plans"
    monkeypatch.setenv(plancache.ENV_DIR, str(folder))
    monkeypatch.setattr(cachefiles, "_said", {str(folder)})

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(plancache, "_write_atomic", full)
    monkeypatch.setattr(cachefiles.tempfile, "mkstemp", full)
    plancache.put("k" * 64, "{}")
    assert not folder.exists()


# -- row 5: the lowering-probe cache --------------------------------------------------------------
lguard = pytest.importorskip("ws_solver.triton.guard.client")


def _verdict_file(folder: Path, key: str, verdict) -> Path:
    lguard._write_verdict(folder, key, verdict)
    return folder / f"{key}.json"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_among_the_probe_verdicts_is_probed_again(tmp_path: Path) -> None:
    """It blocked the compiling thread in `open` forever (read_text, not the reader)."""
    os.mkfifo(tmp_path / "k.json")
    assert _within(10, lambda: lguard._read_verdict(tmp_path, "k")) is None


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fields=st.dictionaries(st.sampled_from(list(lguard._VERDICT_TYPES)), JSON), deep=st.booleans()
)
def test_probe_verdicts_of_any_content(tmp_path: Path, fields: dict, deep: bool) -> None:
    """A deep verdict made every compile fall back (a RecursionError); fields of other types
    came back as a Verdict the report could not use."""
    path = tmp_path / "k.json"
    record = {"for": "k", "verdict": fields}
    path.write_text(DEEP if deep else json.dumps(record))
    verdict = lguard._read_verdict(tmp_path, "k")
    if verdict is None:
        return
    assert not deep and verdict.status in lguard.PERSISTED
    for name, types in lguard._VERDICT_TYPES.items():
        assert isinstance(getattr(verdict, name), types)


def test_a_probe_verdict_is_bound_to_its_key(tmp_path: Path) -> None:
    verdict = lguard.Verdict("error", stage="llir", reason="RuntimeError: boom", wall_s=1.5)
    path = _verdict_file(tmp_path, "a", verdict)
    assert lguard._read_verdict(tmp_path, "a") == verdict
    shutil.copy(path, tmp_path / "b.json")  # copied onto another module's verdict
    assert lguard._read_verdict(tmp_path, "b") is None
    path.write_text(json.dumps({"status": "ok"}))  # the old, unkeyed form
    assert lguard._read_verdict(tmp_path, "a") is None
    _verdict_file(tmp_path, "a", verdict)  # probed again: replaced by a keyed record
    assert stat.S_ISREG(path.lstat().st_mode) and lguard._read_verdict(tmp_path, "a") == verdict


def test_a_report_folder_that_cannot_be_written_is_not_left_empty(tmp_path, monkeypatch) -> None:
    """`ws-solver demo` on a full disk left an empty report folder behind."""
    from ws_solver.cli import demo
    from ws_solver.cli.common import CliError

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(demo.os, "replace", full)
    out = tmp_path / "reports" / "demo"
    with pytest.raises(CliError, match="No space left on device"):
        demo.write_folder(out, {"report.md": b"# report\n"})
    assert not (tmp_path / "reports").exists()
    out.mkdir(parents=True)  # a folder that was there before stays
    with pytest.raises(CliError):
        demo.write_folder(out, {"report.md": b"# report\n"})
    assert out.is_dir() and not list(out.iterdir())


def test_a_cache_that_cannot_keep_plans_is_said_once_in_all(tmp_path: Path) -> None:
    """The command's own line at the start and the line of a failed write are one line."""
    cache, out = tmp_path / "plans", tmp_path / "out.ttgir"
    cache.write_text("")  # a file where the folder should be: every write fails
    done = again(cache, out)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if str(cache) in ln]
    assert len(lines) == 1 and "plans are not kept" in lines[0], done.stderr


def test_a_device_is_not_even_opened(monkeypatch) -> None:
    """Opening some devices acts (a watchdog, a tape); /dev/zero stands for them."""
    opened = []
    real = os.open
    monkeypatch.setattr(
        os, "open", lambda path, *a, **k: (opened.append(path), real(path, *a, **k))[1]
    )
    with pytest.raises(readers.BadFile, match="not a regular file"):
        readers.read_bytes("/dev/zero", 10, follow=True)
    assert opened == []


def test_a_full_tuning_cache_disk_is_said_once(tmp_path: Path, monkeypatch, capfd) -> None:
    from ws_solver.triton.autotuning import tunecache

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setenv(plancache.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(plancache, "_write_atomic", full)
    monkeypatch.setattr(cachefiles, "_said", set())
    monkeypatch.setattr(cachefiles, "say", cachefiles._to_stderr)
    for key in ("a" * 64, "b" * 64, "a" * 64):
        tunecache.store(key, {"kernel": "k"})
    assert capfd.readouterr().err.splitlines() == [
        f"ws_solver: tuning cache {tmp_path / 'tuning'}: cannot write "
        "(No space left on device); tuning choices are not kept"
    ]

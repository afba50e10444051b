"""The plan cache reads its files as data (issue 36, items 6, 7 and 11): what sits at a
record's path but is no regular file of bounded size (a FIFO, a link to /dev/zero, a huge
file) is a bad record, not a hang or an exhausted memory; a record not signed with the cache
folder's secret key is not served; a bad record and a cache that cannot keep plans are said
on stderr."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from test_plan_records import GEMM, GEMM_36, stored, ws_solver

from ws_solver.core import cachefiles
from ws_solver.pipeline import plancache, planrecord


def first_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    cache, out = tmp_path / "plans", tmp_path / "out.ttgir"
    done = ws_solver("partition", GEMM, *GEMM_36, "--strategy", "heuristic", "-o", out, cache=cache)
    assert done.returncode == 0, done.stderr
    path, _ = stored(cache)
    return cache, out, path


def again(cache: Path, out: Path):
    return ws_solver("partition", GEMM, *GEMM_36, "--strategy", "heuristic", "-o", out, cache=cache)


@pytest.mark.parametrize(
    ("plant", "says"),
    [
        (lambda p: os.mkfifo(p), "it is not a regular file"),
        (lambda p: p.symlink_to("/dev/zero"), "it is a symbolic link"),
        (lambda p: p.write_bytes(b" " * (cachefiles.MAX_RECORD_BYTES + 1)), "it is larger"),
        (lambda p: p.write_text("{torn"), "it is not JSON"),
    ],
    ids=["fifo", "link to /dev/zero", "oversized", "torn JSON"],
)
def test_what_is_no_record_is_replaced_and_said(tmp_path: Path, plant, says: str) -> None:
    cache, out, path = first_run(tmp_path)
    path.unlink()
    plant(path)
    done = again(cache, out)  # a FIFO hung here; /dev/zero ate the memory
    assert done.returncode == 0, done.stderr
    assert f"solved again: bad plan-cache record ({says}" in done.stderr, done.stderr
    assert stat.S_ISREG(path.lstat().st_mode)  # replaced by a good record
    assert "from the plan cache" in again(cache, out).stderr


def test_a_planted_record_is_not_served(tmp_path: Path) -> None:
    """A consistent record (its checksum the plain sha256 of its content, as anyone who can
    write the folder can make) claiming a better objective: refused, solved again."""
    cache, out, path = first_run(tmp_path)
    record = json.loads(path.read_text())
    record["reason"] = "planted"
    body = {name: record[name] for name in planrecord.FIELDS}
    record["digest"] = plancache.digest(body)
    path.write_text(json.dumps(record))
    done = again(cache, out)
    assert "its checksum does not match its content" in done.stderr, done.stderr
    assert "planted" not in done.stderr
    key = cache / cachefiles.KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_uid == os.geteuid()


def test_the_key_is_made_once_and_read_back(tmp_path: Path) -> None:
    key = cachefiles.folder_key(tmp_path / "new", create=True)
    assert key is not None and len(key) == 32
    assert cachefiles.folder_key(tmp_path / "new", create=False) == key
    assert cachefiles.folder_key(tmp_path / "none", create=False) is None


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (lambda k: k.chmod(0o644), "may be read or written by other users"),
        (lambda k: (k.unlink(), k.symlink_to("/dev/zero")), "a symbolic link"),
        (lambda k: k.write_text("short"), "is not 64 hex digits"),
    ],
    ids=["readable by others", "a link", "malformed"],
)
def test_an_untrusted_key_makes_the_cache_unusable(tmp_path: Path, spoil, says: str) -> None:
    cache, out, _ = first_run(tmp_path)
    spoil(cache / cachefiles.KEY_NAME)
    done = again(cache, out)
    assert done.returncode == 0, done.stderr
    assert "from the plan cache" not in done.stderr  # not signed with a key it trusts
    assert f"ws-solver: plan cache {cache}: its key" in done.stderr, done.stderr
    assert says in done.stderr and "plans are not kept" in done.stderr


# Root (as CI runs) writes into a folder whatever its permission bits say: "read-only" runs
# only for other users; under a regular file, and /proc, no one can make files.
@pytest.mark.parametrize(
    "where", ["a file", "/dev/null", "read-only", "under a file", "/proc (even for root)"]
)
def test_a_cache_that_cannot_keep_plans_is_said(tmp_path: Path, where: str) -> None:
    out = tmp_path / "out.ttgir"
    if where == "a file":
        cache = tmp_path / "plans"
        cache.write_text("")
    elif where == "/dev/null":
        cache = Path("/dev/null")
    elif where == "under a file":
        (tmp_path / "file").write_text("")
        cache = tmp_path / "file" / "plans"
    elif where.startswith("/proc"):
        cache = Path("/proc")
        if not cache.is_dir():
            pytest.skip("no /proc here")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes a read-only folder (the two cases after it run as root)")
        cache = tmp_path / "plans"
        cache.mkdir(mode=0o555)
    done = again(cache, out)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "plans are not kept" in ln]
    assert len(lines) == 1 and lines[0].startswith(f"ws-solver: plan cache {cache}: "), lines
    assert not (tmp_path / "plans").is_dir() or not any((tmp_path / "plans").iterdir())

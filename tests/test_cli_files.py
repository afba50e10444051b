"""What the commands do with files and options a skeptical user hands them: FIFOs and links as
outputs, an output that is also an input, skipped folder entries, out-of-range options,
a full stdout, running out of memory, a report folder that cannot be made. CPU only, no
root needed (no device nodes are made)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_cli_partition import one_error_line

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


def ws_solver(*args, timeout: float = 120, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("WS_SOLVER_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ws_solver", *map(str, args)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=REPO,
        env=env,
        timeout=timeout,
    )


@pytest.fixture(autouse=True)
def plan_cache(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path_factory.mktemp("plans")))


@pytest.fixture(scope="module")
def graph_text() -> str:
    result = ws_solver("graph", GEMM)
    assert result.returncode == 0, result.stderr
    return result.stdout


# -- outputs ----------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_output_is_written_not_replaced(tmp_path: Path, graph_text: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        result = ws_solver("graph", GEMM, "-o", fifo)
        assert result.returncode == 0, result.stderr
        assert stat.S_ISFIFO(fifo.lstat().st_mode), "the FIFO was replaced by a file"
        out, _ = reader.communicate(timeout=30)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert out.decode() == graph_text
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc/self/fd")
def test_output_through_a_magic_link_to_a_pipe(graph_text: str) -> None:
    """`-o /proc/self/fd/1` (what /dev/stdout points to): the pipe gets the text."""
    result = ws_solver("graph", GEMM, "-o", "/proc/self/fd/1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == graph_text


def test_symlink_output_writes_its_target(tmp_path: Path, graph_text: str) -> None:
    target = tmp_path / "real" / "graph.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    result = ws_solver("graph", GEMM, "-o", link)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == graph_text
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    # A dangling link: its target is made (as a shell's `>` would).
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "real" / "new.txt")
    assert ws_solver("graph", GEMM, "-o", dangling).returncode == 0
    assert dangling.is_symlink() and (tmp_path / "real" / "new.txt").read_text() == graph_text


NOBODY = 65534


def _run_as(user: int | None, argv: list[str], stderr: Path) -> int:
    """`ws-solver ARGV` in a forked child (as `user` when given: this Python stays
    reachable, unlike a fresh one under root's home); its exit status. The command is
    imported here, before the fork: `user` may not read the standard library's folder."""
    from ws_solver.cli import main

    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 3
        try:
            sys.stderr = open(stderr, "w", encoding="utf-8")  # noqa: SIM115 (flushed below)
            if user is not None:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)
            code = main(argv)
        finally:
            sys.stderr.flush()
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_write_protected_output_is_refused_not_replaced(monkeypatch) -> None:
    """Mode 0444 in a writable folder: the shell's `>` refuses it, and so does `-o` (one line,
    exit 2, the file untouched). As root, the command runs as nobody, for whom it is
    protected (root may write it, with `>` too)."""
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        folder.chmod(0o755)
        protected = folder / "graph.txt"
        protected.write_text("keep\n")
        protected.chmod(0o444)
        if root:
            os.chown(folder, NOBODY, NOBODY)
            os.chown(protected, NOBODY, NOBODY)
        monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(folder / "plans"))
        errors = Path(tempfile.mkstemp()[1])
        os.chmod(errors, 0o666)
        try:
            for command in (["graph"], ["partition", "--strategy", "heuristic"]):
                argv = [*command, str(GEMM), "-o", str(protected)]
                assert _run_as(NOBODY if root else None, argv, errors) == 2
                message = errors.read_text().splitlines()
                assert message == [f"ws-solver: {protected}: cannot write: permission denied"]
                assert protected.read_text() == "keep\n"
                assert stat.S_IMODE(protected.stat().st_mode) == 0o444
            assert sorted(p.name for p in folder.iterdir() if p.name != "plans") == ["graph.txt"]
        finally:
            errors.unlink()


def test_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    gemm = tmp_path / "gemm.ttgir"
    shutil.copy(GEMM, gemm)
    before = gemm.read_bytes()
    link = tmp_path / "alias.ttgir"
    link.symlink_to(gemm)
    text_link = tmp_path / "alias.txt"
    text_link.symlink_to(gemm)
    for args in (
        ["partition", gemm, "-o", gemm, "--strategy", "none"],
        ["partition", gemm, "-o", link, "--strategy", "none"],
        ["partition", gemm, "--json", gemm, "--strategy", "none"],
        ["explain", gemm, "-o", text_link],
        ["graph", tmp_path, "-o", gemm],
        ["compare", gemm, "--json", gemm],
    ):
        result = ws_solver(*args)
        assert result.returncode == 2, (args, result.stderr)
        line = one_error_line(result)
        assert "the output file is an input" in line, line
    assert gemm.read_bytes() == before


def test_the_same_output_twice_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = ws_solver("partition", GEMM, "--strategy", "none", "-o", out, "--json", out)
    assert result.returncode == 2
    assert "the output file is also given as" in one_error_line(result)
    assert not out.exists()


def test_directory_output_is_refused(tmp_path: Path) -> None:
    result = ws_solver("graph", GEMM, "-o", tmp_path)
    assert result.returncode == 2
    assert one_error_line(result) == f"ws-solver: {tmp_path}: cannot write: is a directory"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_stdout_error_is_a_clear_failure() -> None:
    with open("/dev/full", "w") as full:
        result = ws_solver("graph", GEMM, stdout=full)
    assert result.returncode == 2
    assert one_error_line(result) == "ws-solver: stdout: cannot write: No space left on device"


# -- inputs -----------------------------------------------------------------------------------
def test_dangling_link_in_a_compare_folder_is_reported(tmp_path: Path) -> None:
    shutil.copy(GEMM, tmp_path / "gemm.ttgir")
    (tmp_path / "gone.ttgir").symlink_to(tmp_path / "nowhere.ttgir")
    report = tmp_path / "out.json"
    result = ws_solver("compare", tmp_path, "--time-limit", "0.5", "--json", report, "-q")
    assert result.returncode == 1, result.stderr
    assert f"{tmp_path / 'gone.ttgir'}: skipped: dangling symbolic link" in result.stderr
    document = json.loads(report.read_text())
    assert len(document["loops"]) == 1
    [failure] = document["failures"]
    assert failure["file"] == str(tmp_path / "gone.ttgir") and failure["kind"] == "bad_input"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_in_a_graph_folder_is_skipped_not_read(tmp_path: Path) -> None:
    shutil.copy(GEMM, tmp_path / "gemm.ttgir")
    os.mkfifo(tmp_path / "pipe.ttgir")  # reading it would block forever
    result = ws_solver("graph", tmp_path, "--format", "table", timeout=60)
    assert result.returncode == 1
    assert f"{tmp_path / 'pipe.ttgir'}: skipped: not a regular file" in result.stderr
    assert "1 loop in 1 file; 1 entry skipped" in result.stdout
    result = ws_solver("graph", tmp_path, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert "skipped: not a regular file" in one_error_line(result)


# -- options ----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["partition", "compare", "explain", "explore"])
@pytest.mark.parametrize(
    "option",
    [
        ["--seed", "2147483648"],
        ["--seed", "-1"],
        ["--workers", "2.5"],
        ["--workers", "0"],
        ["--workers", "100000"],
        ["--time-limit", "nan"],
        ["--time-limit", "inf"],
        ["--time-limit", "abc"],
    ],
)
def test_bad_solver_options_are_usage_errors(command: str, option: list[str]) -> None:
    result = ws_solver(command, GEMM, *option)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert f"argument {option[0]}:" in result.stderr.splitlines()[-1]


def test_largest_seed_is_accepted() -> None:
    result = ws_solver("partition", GEMM, "--seed", "2147483647", "--time-limit", "0.5")
    assert result.returncode == 0, result.stderr


def test_out_of_memory_is_a_clear_failure(monkeypatch, capsys) -> None:
    from ws_solver import cli, ir

    def exhausted(text: str):
        raise MemoryError

    monkeypatch.setattr(ir, "parse", exhausted)
    assert cli.main(["graph", str(GEMM)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ws-solver: out of memory") and "internal error" not in err


def test_demo_checks_its_folder_before_solving(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder\n")
    result = ws_solver("demo", "--corpus", GEMM, "--out", blocker / "demo", timeout=60)
    assert result.returncode == 2
    line = one_error_line(result)  # no progress lines: nothing was solved
    assert "is not a directory" in line, line
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.html").mkdir()
    result = ws_solver("demo", "--corpus", GEMM, "--out", tmp_path / "out", timeout=60)
    assert result.returncode == 2
    assert "report.html: cannot write: is a directory" in one_error_line(result)

"""Issue 50, what a user hands ws_solver: compile-log lines of the wrong types or nesting, a
FIFO as the report file, limits past what the clock can wait, public-API arguments of the
wrong type, a cache folder that cannot be made, /dev/zero or a FIFO as the input file. Each
is refused in one line naming the argument, file or line (or read as promised), never a
hang, unbounded memory, a raw error from deep inside or a silent fallback at compile time."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ws_solver
from ws_solver.core import options
from ws_solver.report.reports import render
from ws_solver.triton.dropin import environ, reportlog

REPO = Path(__file__).resolve().parent.parent
GEMM = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
DEEP = "[" * 5000 + "]" * 5000

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


# -- row 3: `ws-solver reports` on lines of the wrong types or nesting ---------------------------
def _compile_line(**report) -> str:
    record = {**reportlog.process_fields("compile"), "kernel": "k", "capability": 90}
    record["hash"] = "h"
    record["report"] = {"kernel": "k", "capability": 90, **report}
    return json.dumps(record)


READ_BY_THE_SUMMARY = [
    *reportlog._REPORT_TYPES,
    "decision.rule",
    "decision.specialized",
    "decision.stock",
    "decision.stock.status",
    "decision.stock.specialized",
    "loops.strategy",
    "loops.partitions",
    "pid",
]


def _line_with(field: str, value) -> str:
    if field == "pid":
        record = json.loads(_compile_line())
        record["pid"] = value
        return json.dumps(record)
    if field.startswith("loops."):
        return _compile_line(loops=[{field.split(".")[1]: value}])
    if field.startswith("decision."):
        parts = field.split(".")[1:]
        inner: object = value
        for part in reversed(parts):
            inner = {part: inner}
        return _compile_line(**inner)
    return _compile_line(**{field: value})


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(READ_BY_THE_SUMMARY), value=JSON)
def test_a_log_line_of_any_field_value_is_read_or_named(field: str, value) -> None:
    """It was a TypeError, ValueError or AttributeError out of the summary (rc 3)."""
    try:
        record = reportlog.parse_line(_line_with(field, value) + "\n", "log:7")
    except reportlog.CompileLogError as e:
        assert str(e).startswith("log:7: ") and "\n" not in str(e)
        return
    summary = reportlog.summarize([record])
    render("log", summary)
    json.dumps(summary.rows[0].__dict__)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (_compile_line(fallbacks=5), "report.fallbacks is 5, not list"),
        (_compile_line(wall_s="slow"), 'report.wall_s is "slow", not int or float'),
        (_compile_line(wall_s=10**400), "report.wall_s is not a finite number"),
        (_compile_line(decision=[]), "report.decision is [], not dict"),
        (_compile_line().replace('"pid": ', '"pid": "abc", "_": '), 'pid is "abc", not int'),
        ('{"schema": ' + DEEP + "}", "nests deeper than"),
    ],
    ids=["fallbacks=5", "wall_s=slow", "wall_s=10**400", "decision=[]", "pid=abc", "deep"],
)
def test_reports_names_the_line_of_a_wrong_type(ws_solver, tmp_path: Path, line, says) -> None:
    path = tmp_path / "ws.jsonl"
    path.write_text(_compile_line() + "\n" + line + "\n")
    done = ws_solver("reports", path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"ws-solver: {path}:2: ") and says in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1


# -- row 6: a FIFO as the report file ------------------------------------------------------------
def _within(seconds: float, work):
    done: list = []

    def run() -> None:
        try:
            done.append(work())
        except Exception as e:
            done.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"blocked for more than {seconds} s"
    return done[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_report_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    """`import triton` hung: the "enabled" record was appended to the FIFO, which blocks in
    open() until someone reads it."""
    fifo = tmp_path / "ws.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is not a regular file"):
        reportlog.check_path(fifo, "report_file")
    with pytest.raises(environ.EnvironmentSettingError, match="WS_SOLVER_REPORT") as caught:
        environ.enable_arguments({"WS_SOLVER": "heuristic", "WS_SOLVER_REPORT": str(fifo)})
    assert caught.value.variable == "WS_SOLVER_REPORT"
    record = reportlog.process_fields("off")
    failed = _within(10, lambda: reportlog.append(fifo, record))
    assert isinstance(failed, OSError), failed  # what check_path let by is not waited on
    assert _within(10, lambda: environ._log_path({"WS_SOLVER_REPORT": str(fifo)})) is None


# -- row 9: limits past what the clock can wait ---------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    value=st.floats(min_value=1e5, max_value=1e308)
    | st.sampled_from([1e10, 1e300, 1e308, options.MAX_SECONDS, 9.3e9])
)
def test_limits_are_one_check_for_the_environment_and_the_caller(value: float) -> None:
    """`enable(time_limit=1e10)` was accepted and every attempt then failed "OverflowError:
    timestamp out of range". The environment's text and the caller's number go through the
    same check: both accept a value or both refuse it, naming it."""
    try:
        by_caller = options.SolveOptions(time_limit=value).time_limit
    except ValueError as e:
        by_caller = None
        assert "time_limit must be at most" in str(e)
    try:
        by_environment = environ.enable_arguments(
            {"WS_SOLVER": "optimal", "WS_SOLVER_TIME_LIMIT": repr(value)}
        )["time_limit"]
    except environ.EnvironmentSettingError as e:
        by_environment = None
        assert str(e).startswith("WS_SOLVER_TIME_LIMIT=")
    assert by_caller == by_environment
    assert (by_caller is None) == (value > options.MAX_SECONDS)
    if by_caller is not None:  # a wait of that long cannot overflow the clock
        assert by_caller <= threading.TIMEOUT_MAX


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WS_SOLVER_TIME_LIMIT", "1e308"),
        ("WS_SOLVER_PARTITION_TIMEOUT", "1e300"),
        ("WS_SOLVER_LOWERING_TIMEOUT", "1e300"),
        ("WS_SOLVER", " optimal"),  # enable(" optimal") is refused: so is the variable
    ],
)
def test_the_environment_refuses_what_enable_refuses(variable: str, value: str) -> None:
    with pytest.raises(environ.EnvironmentSettingError) as caught:
        environ.enable_arguments({"WS_SOLVER": "optimal", variable: value})
    assert caught.value.variable == variable and "\n" not in str(caught.value)


triton = pytest.importorskip("triton")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    from triton import knobs

    import ws_solver.triton as wst

    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path / "plans"))
    with knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = str(tmp_path / "triton")
        knobs.runtime.add_stages_inspection_hook = None
        try:
            yield tmp_path, wst
        finally:
            wst.disable()


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"time_limit": 1e10}, "time_limit"),
        ({"partition_timeout": 1e300}, "partition_timeout"),
        ({"lowering_timeout": 1e300}, "lowering_timeout"),  # it silently turned the guard off
        ({"strategy": " optimal"}, "unknown strategy ' optimal'"),
    ],
)
def test_enable_refuses_limits_past_the_clock(isolated, kwargs: dict, names: str) -> None:
    _, wst = isolated
    with pytest.raises(ValueError, match=names) as caught:
        wst.enable(**kwargs)
    assert "\n" not in str(caught.value) and not wst.is_enabled()


def test_the_command_line_refuses_a_time_limit_past_the_clock(ws_solver) -> None:
    done = ws_solver("partition", GEMM, "--time-limit", "1e10", timeout=60)
    assert done.returncode == 2 and "must be at most 1000000 seconds" in done.stderr


# -- row 12: a cache folder that cannot be made, though os.access says it can --------------------
@pytest.mark.skipif(os.geteuid() != 0, reason="os.access lies about /proc to root only")
def test_a_cache_dir_in_proc_is_refused_as_root(isolated) -> None:
    _, wst = isolated
    assert os.access("/proc", os.W_OK | os.X_OK)  # what the old check asked
    with pytest.raises(ValueError, match="cache_dir '/proc/nope' cannot be written in '/proc'"):
        wst.enable("heuristic", cache_dir="/proc/nope")
    with pytest.raises(environ.EnvironmentSettingError, match="WS_SOLVER_TRITON_CACHE_DIR"):
        environ.enable_arguments({"WS_SOLVER": "optimal", "WS_SOLVER_TRITON_CACHE_DIR": "/proc/x"})


def test_a_cache_dir_check_leaves_nothing_behind(isolated, tmp_path: Path) -> None:
    _, wst = isolated
    wst.enable("heuristic", cache_dir=tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()  # made to try, removed again


def test_cache_dir_checks_at_once_all_pass(isolated, tmp_path: Path) -> None:
    """torch.compile's workers check the same new folder at the same moment: one's removal
    of the folder it made must not fail another's check."""
    from ws_solver.triton.dropin.switch import check_cache_dir

    for round in range(5):
        where = tmp_path / f"r{round}" / "a" / "b"
        results: list = []
        threads = [
            threading.Thread(
                target=lambda out=results, w=where: out.append(_outcome(check_cache_dir, w))
            )
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert results == [str(where)] * 8


def _outcome(work, *args):
    try:
        return work(*args)
    except Exception as e:
        return e


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a folder of mode 0500")
def test_a_cache_dir_is_tried_not_asked(isolated, tmp_path: Path, monkeypatch) -> None:
    """os.access answered for the folder as /proc answers root: yes; the try says no."""
    _, wst = isolated
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: True)
    with pytest.raises(ValueError, match="cannot be written in"):
        wst.enable("heuristic", cache_dir=locked / "sub")


# -- row 10: the public functions' arguments ------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "error", "names"),
    [
        (lambda: ws_solver.explore(GEMM, k=2.5), ValueError, "k must be an integer"),
        (lambda: ws_solver.explore(GEMM, k=True), ValueError, "k must be an integer"),
        (lambda: ws_solver.explore(GEMM, k="3"), ValueError, "k must be an integer"),
        (lambda: ws_solver.explore(GEMM, backend="nope"), ValueError, "backend 'nope'"),
        (lambda: ws_solver.explore(GEMM, backend=3), TypeError, "backend must be"),
        (lambda: ws_solver.explore(123), TypeError, "source must be a path or TTGIR text"),
        (lambda: ws_solver.explore(GEMM, target=90), TypeError, "target must be"),
        (lambda: ws_solver.explore(GEMM, time_limit=1e10), ValueError, "time_limit"),
        (lambda: ws_solver.compare(b"module {}"), TypeError, "sources must be a path"),
        (lambda: ws_solver.compare([GEMM, 7]), TypeError, r"sources\[1\] must be a path"),
        (lambda: ws_solver.compare(GEMM, backend="nope"), ValueError, "backend 'nope'"),
        (lambda: ws_solver.compare(GEMM, cache="yes"), ValueError, "cache must be True"),
        (lambda: ws_solver.compare(GEMM, triton=3.6), TypeError, "triton must be"),
    ],
)
def test_public_arguments_are_refused_in_one_line(call, error, names: str) -> None:
    with pytest.raises(error, match=names) as caught:
        call()
    assert "\n" not in str(caught.value)


def test_explore_reads_its_file_through_the_reader() -> None:
    with pytest.raises(ValueError, match="/dev/zero: cannot read: it is not a regular file"):
        _raise(_within(30, lambda: ws_solver.explore("/dev/zero")))


def _raise(value):
    if isinstance(value, Exception):
        raise value
    return value


# -- row 13: /dev/zero (or a FIFO) as the input file ---------------------------------------------
def _limited_memory() -> None:  # the old code read /dev/zero until the memory ran out
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _run(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WS_SOLVER")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "ws_solver", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=_limited_memory,
    )


@pytest.mark.parametrize(
    "command", ["partition", "graph", "explain", "explore", "compare", "reports", "demo --corpus"]
)
def test_dev_zero_as_input_is_a_usage_error(command: str) -> None:
    done = _run(*command.split(), "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert "/dev/zero: cannot read: it is not a regular file" in done.stderr, done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_input_is_a_usage_error(tmp_path: Path) -> None:
    fifo = tmp_path / "in.ttgir"
    os.mkfifo(fifo)
    done = _run("partition", fifo)  # it blocked in open() until someone wrote to it
    assert done.returncode == 2
    assert done.stderr == f"ws-solver: {fifo}: cannot read: it is not a regular file\n"


def test_an_oversized_input_is_refused(tmp_path: Path, monkeypatch) -> None:
    from ws_solver.core import readers
    from ws_solver.core.failures import ReportedError
    from ws_solver.pipeline.inputs import read_module

    monkeypatch.setattr(readers, "MAX_INPUT_BYTES", 1000)
    big = tmp_path / "big.ttgir"
    big.write_text(GEMM.read_text())
    with pytest.raises(ReportedError, match="it is larger than 1000 bytes"):
        read_module(big)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_every_float_limit_is_a_value_or_one_line(value: float) -> None:
    try:
        checked = options.check_time_limit(value)
    except ValueError as e:
        assert "\n" not in str(e)
        return
    assert 0 < checked <= options.MAX_SECONDS and math.isfinite(checked)


def test_partition_text_checks_its_arguments() -> None:
    from ws_solver.pipeline.partition import partition_text

    text = GEMM.read_text()
    for kwargs, error, names in (
        ({"options": {"time_limit": 1}}, TypeError, "options must be None or SolveOptions"),
        ({"target": 90}, TypeError, "target must be None or text"),
        ({"triton": 3.6}, TypeError, "triton must be None or text"),
    ):
        with pytest.raises(error, match=names):
            partition_text(text, "heuristic", **kwargs)
    with pytest.raises(TypeError, match="text must be TTGIR text"):
        partition_text(text.encode(), "heuristic")

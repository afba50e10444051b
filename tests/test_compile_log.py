"""The compile log (ws_solver.triton.dropin.reportlog), `ws-solver reports`, the WS_SOLVER_*
variables (ws_solver.triton.dropin.environ) and ``enable(skip=...)``."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from ws_solver.triton.dropin import environ, reportlog
from ws_solver.triton.dropin.session import CompileReport

RECORDS_PER_WRITER = 200
WRITERS = 4
BIG_NOTE = "x" * 70_000  # a record far over PIPE_BUF and a page: one write of the whole line


def _report(kernel: str, **fields) -> CompileReport:
    report = CompileReport(kernel, 90, "optimal", "optimal")
    for key, value in fields.items():
        setattr(report, key, value)
    return report


def _writer(path: str, writer: int) -> None:
    for i in range(RECORDS_PER_WRITER):
        report = _report(f"k{writer}_{i}", notes=[BIG_NOTE if i % 10 == 0 else "short"])
        reportlog.append(path, reportlog.compile_record(report, f"h{writer}_{i}"))


def test_appends_from_many_processes_stay_whole_lines(tmp_path: Path) -> None:
    path = str(tmp_path / "ws.jsonl")
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_writer, args=(path, w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    records = reportlog.read(path)  # every line parses: no two writes interleaved
    assert len(records) == WRITERS * RECORDS_PER_WRITER
    hashes = {r["hash"] for r in records}
    assert hashes == {f"h{w}_{i}" for w in range(WRITERS) for i in range(RECORDS_PER_WRITER)}
    assert sum(r["report"]["notes"] == [BIG_NOTE] for r in records) == WRITERS * 20


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json\n", "not JSON"),
        ('{"kernel": "k"}\n', "not a ws_solver compile-log record"),
        ('{"schema": "ws-solver.compile-log", "version": 99, "event": "compile"}\n', "version"),
        ('{"schema": "ws-solver.compile-log", "version": 1, "event": "boom"}\n', "unknown event"),
        ('{"schema": "ws-solver.compile-log", "version": 1, "event": "compile"}\n', "without"),
        ('{"schema": "ws-solver.compile-log", "version": 1, "event": "compile", "rep', "cut-off"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    path = tmp_path / "ws.jsonl"
    reportlog.append(path, reportlog.compile_record(_report("k"), "h"))
    with open(path, "a") as f:
        f.write(line)
    with pytest.raises(reportlog.CompileLogError, match=rf"^{path}:2: .*{why}"):
        reportlog.read(path)


def _log_with_rows(path: Path) -> None:
    specialized = _report(
        "gemm",
        loops=[{"specialized": True, "partitions": [{}, {}, {}]}],
        lowered=[{"warps": [4, 1, 1]}],
        decision={"stock": {"status": "ok", "specialized": False}, "specialized": True,
                  "rule": "measured target"},
    )  # fmt: skip
    fell_back = _report(
        "attn", strategy_used="stock", fallbacks=[{"strategy": "optimal"}, {"strategy": "none"}]
    )
    skipped = _report("other", strategy_used="stock", notes=["skipped: the kernel matches 'o*'"])
    for report in (specialized, fell_back, skipped):
        reportlog.append(path, reportlog.compile_record(report, "h"))
    off = {**reportlog.process_fields("off"), "variable": "WS_SOLVER_SEED", "reason": "bad"}
    reportlog.append(path, off)


def test_summary_rows(tmp_path: Path) -> None:
    path = tmp_path / "ws.jsonl"
    _log_with_rows(path)
    summary = reportlog.summarize(reportlog.read(path))
    gemm, attn, other = summary.rows
    assert (gemm.plans, gemm.decision, gemm.stock, gemm.rule) == (
        "3p",
        "specialized",
        "unspecialized",
        "measured target",
    )
    assert (attn.used, attn.fallbacks, attn.decision, attn.stock) == ("stock", 2, "", "")
    assert other.notes == ("skipped: the kernel matches 'o*'",)
    assert len(summary.off) == 1 and summary.off[0][1] == "bad"


def test_reports_command_table_json_and_errors(ws_solver, tmp_path: Path) -> None:
    path = tmp_path / "ws.jsonl"
    _log_with_rows(path)
    table = ws_solver("reports", path)
    assert table.returncode == 0, table.stderr
    assert "3 compiles in 1 process" in table.stdout
    assert "stock (skipped)" in table.stdout and "off in pid" in table.stdout
    assert "stock Triton decided otherwise on 1" in table.stdout
    only = json.loads(ws_solver("reports", path, "--json", "--kernel", "g*").stdout)
    assert [r["kernel"] for r in only["rows"]] == ["gemm"]
    for bad, message in (
        (tmp_path / "missing.jsonl", "no such file"),
        (tmp_path, "a folder, not a compile log"),
    ):
        result = ws_solver("reports", bad)
        assert result.returncode == 2
        assert result.stderr == f"ws-solver: {bad}: {message}\n"
    path.write_text(path.read_text() + "garbage\n")
    result = ws_solver("reports", path)
    assert result.returncode == 2 and result.stderr.startswith(f"ws-solver: {path}:5: not JSON")


# -- the variables ----------------------------------------------------------------------------
def test_variables_become_enable_arguments(tmp_path: Path) -> None:
    arguments = environ.enable_arguments(
        {
            "WS_SOLVER": "explore:2",
            "WS_SOLVER_TIME_LIMIT": "2.5",
            "WS_SOLVER_WORKERS": "4",
            "WS_SOLVER_CHECK_DECISION": "off",
            "WS_SOLVER_LOWERING_TIMEOUT": "0",
            "WS_SOLVER_SKIP": "_attn_*, triton_tem_*",
            "WS_SOLVER_REPORT": str(tmp_path / "ws.jsonl"),
            "WS_SOLVER_TRITON_CACHE_DIR": str(tmp_path),
            "WS_SOLVER_CACHE_DIR": "/plans",  # the plan cache's own variable: not enable()'s
            "WS_SOLVER_SEED": "",  # empty: the default
        }
    )
    assert arguments == {
        "strategy": "explore:2",
        "time_limit": 2.5,
        "workers": 4,
        "check_decision": False,
        "lowering_timeout": None,
        "skip": ("_attn_*", "triton_tem_*"),
        "report_file": str(tmp_path / "ws.jsonl"),
        "cache_dir": str(tmp_path),
    }


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("WS_SOLVER", "fast", "unknown strategy 'fast'"),
        ("WS_SOLVER_WORKERS", "0", "the number of workers must be an integer from 1"),
        ("WS_SOLVER_TIME_LIMIT", "-1", "positive"),
        ("WS_SOLVER_CACHE", "maybe", "not a switch"),
        ("WS_SOLVER_REPORT", "/no/such/folder/ws.jsonl", "does not exist"),
        ("WS_SOLVER_TRITON_CACHE_DIR", "/proc/version/x", "is not a folder"),
        ("WS_SOLVER_TIMELIMIT", "2", "not a ws_solver variable"),
    ],
)
def test_a_bad_variable_is_named(variable: str, value: str, message: str) -> None:
    with pytest.raises(environ.EnvironmentSettingError, match=message) as caught:
        environ.enable_arguments({"WS_SOLVER": "optimal", variable: value})
    assert caught.value.variable == variable
    assert str(caught.value).startswith(variable)


def test_skip_patterns_are_checked() -> None:
    from ws_solver.triton.dropin.session import Settings

    assert Settings(skip="k*").skip == ("k*",)
    assert Settings(skip=("a", "b*")).skipped_by("b1") == "b*"
    assert Settings(skip=("a",)).digest() != Settings().digest()
    with pytest.raises(ValueError, match="non-empty kernel-name patterns"):
        Settings(skip=("",))


@pytest.mark.triton
def test_a_skipped_kernel_compiles_as_stock_triton(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    from triton_util import compile_corpus_kernel

    log = tmp_path / "ws.jsonl"
    config = _first_config("gemm_tma")
    skipped = compile_corpus_kernel(
        "gemm_tma", config, "optimal", 100, skip="gemm_*", report_file=log, lowering_timeout=None
    )
    (record,) = reportlog.read(log)
    assert record["report"]["strategy_used"] == "stock"
    assert record["report"]["notes"] == ["skipped: the kernel matches skip pattern 'gemm_*'"]
    stock = _stock_compile("gemm_tma", 100)
    assert skipped.asm["ttgir"] == stock.asm["ttgir"]


def _stock_compile(kernel: str, capability: int):
    import tempfile

    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget

    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source

    config = _first_config(kernel)
    with tempfile.TemporaryDirectory() as cache, knobs.cache.scope():
        knobs.cache.dir = cache
        return triton.compile(
            ast_source(kernel, config),
            target=GPUTarget("cuda", capability, 32),
            options=corpus_kernels.options(config),
        )


def _first_config(kernel: str) -> dict:
    from corpus import kernels as corpus_kernels

    return next(iter(corpus_kernels.load(kernel).CONFIGS.values()))


def test_the_guide_lists_every_variable() -> None:
    guide = (Path(__file__).resolve().parent.parent / "docs" / "torch-compile.md").read_text()
    rows = {line.split("`")[1] for line in guide.splitlines() if line.startswith("| `WS_")}
    assert rows == {v.name for v in environ.VARIABLES[1:]}

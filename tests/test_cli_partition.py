"""`ws-solver partition`, driven as a user would: a subprocess, exit codes, files, stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ws_solver.core.options import DEFAULT_WORKERS

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"  # solved in well under a second
ATTENTION = CORPUS / "attention_fwd.d128_m128n128_w8_s2.sm90.ttgir"  # specialized (8 warps)
TWO_LOOPS = CORPUS / "attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir"
ROW_REDUCE = CORPUS / "row_reduce.r4_n1024_w4_s3.sm90.ttgir"  # nothing to overlap
GARBAGE = "module {\n  tt.func @f() {\n    %0 = arith.addi %x, : i32\n  }\n}\n"
NO_WS_LOOP = 'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {\n}\n'


def one_error_line(result) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ws-solver: ")
    return lines[0]


def infeasible_ttgir(folder: Path) -> Path:
    """gemm_tma with 1024-row tiles: its two staged operands need 256 KiB of shared memory,
    more than any sm_90 CTA has, however the loop is partitioned."""
    text = (
        GEMM.read_text().replace("128x64xf16", "1024x64xf16").replace("64x128xf16", "64x1024xf16")
    )
    path = folder / "infeasible.ttgir"
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch) -> Path:
    """Every run gets its own, empty plan cache (not the user's)."""
    folder = tmp_path_factory.mktemp("plan-cache")
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(folder))
    return folder


# -- results ----------------------------------------------------------------------------------


def test_optimal_writes_annotated_ttgir_and_report(ws_solver, tmp_path: Path, cache: Path) -> None:
    out, report = tmp_path / "out.ttgir", tmp_path / "report.json"
    result = ws_solver(
        # 5 s of wall clock: at 1 s a loaded 2-core machine cut the solve before its bound
        "partition",
        ATTENTION,
        "-o",
        out,
        "--json",
        report,
        "--time-limit",
        "5",
        cache_dir=cache,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    text = out.read_text()
    assert "ttg.partition = array<i32:" in text and "ttg.warp_specialize.tag" in text
    raw = report.read_text()
    document = json.loads(raw)
    assert raw == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert document["schema"] == "ws-solver.partition" and document["version"] == 2
    assert document["file"] == str(ATTENTION) and document["target"] == "sm_90"
    assert document["strategy"] == "optimal"
    assert document["options"] == {
        "cache": True,
        "seed": 0,
        "time_limit": 5.0,
        "workers": DEFAULT_WORKERS,
    }
    (loop,) = document["loops"]
    for key in ("status", "objective", "bound", "gap", "heuristic_objective", "wall_s", "ii"):
        assert key in loop, key
    assert loop["file"] == str(ATTENTION)
    assert loop["kernel"] == "attention_fwd_kernel" and loop["loop"] == 0
    assert loop["specialized"] is True and len(loop["partitions"]) >= 2
    assert loop["status"] in ("OPTIMAL", "FEASIBLE")
    assert loop["objective"] <= loop["heuristic_objective"]
    # The bound is in cycles, as II is; the bound on the internal objective is kept apart.
    assert isinstance(loop["bound"], int) and 0 < loop["bound"] <= loop["ii"]
    if loop["status"] == "OPTIMAL":
        assert loop["bound"] == loop.get("optimum_ii", loop["ii"])
    assert loop["bound_objective"] <= loop["objective"] and loop["bound_objective"] > 2**24
    # One summary line per loop on stderr.
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"ws-solver: {ATTENTION}:{loop['line']}: attention_fwd_kernel loop 0")
    assert "specialized into" in line


def test_stdout_equals_output_file(ws_solver, tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "out.ttgir"
    to_file = ws_solver("partition", TWO_LOOPS, "--strategy", "heuristic", "-o", out, "-q")
    to_stdout = ws_solver("partition", TWO_LOOPS, "--strategy", "heuristic", cache_dir=cache)
    assert to_file.returncode == 0 and to_stdout.returncode == 0, to_stdout.stderr
    assert to_file.stderr == ""
    assert to_stdout.stdout == out.read_text()
    assert len(to_stdout.stderr.splitlines()) == 2  # two loops


def test_loop_not_worth_specializing_loses_its_tag(ws_solver, tmp_path: Path, cache: Path) -> None:
    report = tmp_path / "r.json"
    result = ws_solver("partition", ROW_REDUCE, "--json", report, cache_dir=cache)
    assert result.returncode == 0, result.stderr
    assert "tt.warp_specialize" in ROW_REDUCE.read_text()
    assert "tt.warp_specialize" not in result.stdout
    (loop,) = json.loads(report.read_text())["loops"]
    assert loop["specialized"] is False
    assert loop["reason"].startswith("not specialized")
    assert loop["status"] == "SKIPPED" and loop["bound"] is None
    assert loop["bound_objective"] is None
    assert ": not specialized: no load feeds an MMA; modeled II" in result.stderr


def test_strategy_none_and_target_override(ws_solver, tmp_path: Path, cache: Path) -> None:
    report = tmp_path / "r.json"
    result = ws_solver(
        "partition", TWO_LOOPS, "--strategy", "none", "--target", "sm_100", "--json", report
    )
    assert result.returncode == 0, result.stderr
    assert "tt.warp_specialize" not in result.stdout
    document = json.loads(report.read_text())
    assert document["target"] == "sm_100"
    assert [loop["target"] for loop in document["loops"]] == ["sm_100", "sm_100"]
    assert all(not loop["specialized"] for loop in document["loops"])


# -- bad input: one line naming the file, a distinct exit status, no output -------------------


def _no_output(tmp_path: Path, *names: str) -> None:
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name not in names)
    assert leftovers == [], leftovers


@pytest.mark.parametrize(
    "content, expect",
    [
        (GARBAGE, ":3:"),  # file:line:column
        (GEMM.read_text()[: len(GEMM.read_text()) // 2], ":"),  # truncated in the middle
        (NO_WS_LOOP, ": no loop carries tt.warp_specialize"),
        (b"\x00\xff\xfe binary", ":1:"),
    ],
    ids=["garbage", "truncated", "no-ws-loop", "binary"],
)
def test_bad_input(ws_solver, tmp_path: Path, content, expect: str) -> None:
    bad = tmp_path / "bad.ttgir"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    out, report = tmp_path / "out.ttgir", tmp_path / "r.json"
    result = ws_solver("partition", bad, "-o", out, "--json", report)
    assert result.returncode == 2
    line = one_error_line(result)
    assert line.startswith(f"ws-solver: {bad}") and expect in line
    assert result.stdout == ""
    _no_output(tmp_path, "bad.ttgir")


def test_missing_and_unreadable_files(ws_solver, tmp_path: Path) -> None:
    result = ws_solver("partition", tmp_path / "nope.ttgir")
    assert result.returncode == 2
    assert "nope.ttgir: cannot read" in one_error_line(result)
    result = ws_solver("partition", tmp_path)
    assert result.returncode == 2
    assert f"{tmp_path}: cannot read" in one_error_line(result)


def test_module_without_target_needs_target_flag(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "no-target.ttgir"
    bad.write_text(GEMM.read_text().replace('ttg.target = "cuda:90", ', ""))
    result = ws_solver("partition", bad, "--strategy", "heuristic")
    assert result.returncode == 2
    assert "pass --target" in one_error_line(result)
    result = ws_solver("partition", bad, "--strategy", "heuristic", "--target", "sm_90", "-q")
    assert result.returncode == 0, result.stderr


def test_infeasible_loop(ws_solver, tmp_path: Path, cache: Path) -> None:
    bad = infeasible_ttgir(tmp_path)
    out = tmp_path / "out.ttgir"
    out.write_text("previous\n")
    for strategy in ("optimal", "heuristic"):
        result = ws_solver("partition", bad, "--strategy", strategy, "-o", out, cache_dir=cache)
        assert result.returncode == 4, result.stderr
        line = one_error_line(result)
        assert line.startswith(f"ws-solver: {bad}:42: gemm_tma_kernel loop 0: ")
        assert "shared memory" in line
        assert out.read_text() == "previous\n"
    _no_output(tmp_path, "infeasible.ttgir", "out.ttgir")
    # Not specializing is always possible.
    result = ws_solver("partition", bad, "--strategy", "none", "-q")
    assert result.returncode == 0, result.stderr


TIMEOUT_SCRIPT = """
import sys
import ws_solver.encode as encode
from ws_solver.encode import SolveResult
from ws_solver.cli import main

def out_of_time(graph, target, hint=None, **kwargs):
    # The solver's limit ran out before it found or disproved any plan.
    return SolveResult(plan=hint, status="UNKNOWN", objective=None, bound=None, gap=None,
                       wall_s=0.0, hint_objective=None, ii=None)

encode.solve = out_of_time
sys.exit(main(sys.argv[1:]))
"""


def test_timeout_without_a_plan(tmp_path: Path) -> None:
    bad = infeasible_ttgir(tmp_path)  # its heuristic plan is invalid: nothing to fall back on
    out = tmp_path / "out.ttgir"
    env = dict(os.environ, PYTHONPATH=str(REPO), WS_SOLVER_CACHE_DIR=str(tmp_path / "c"))
    result = subprocess.run(
        [sys.executable, "-c", TIMEOUT_SCRIPT, "partition", str(bad), "-o", str(out), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert result.returncode == 5, result.stderr
    line = one_error_line(result)
    assert line.startswith(f"ws-solver: {bad}:42: gemm_tma_kernel loop 0: ")
    assert "time ran out" in line and "--time-limit" in line
    assert not out.exists()


def test_unwritable_output_fails_before_solving(ws_solver, tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "out.ttgir"
    result = ws_solver("partition", GEMM, "-o", out)
    assert result.returncode == 2
    assert one_error_line(result).startswith(f"ws-solver: {out}: cannot write")


@pytest.mark.parametrize(
    "args",
    [["--time-limit", "0"], ["--time-limit", "x"], ["--workers", "0"], ["--strategy", "best"]],
)
def test_usage_errors(ws_solver, args) -> None:
    result = ws_solver("partition", GEMM, *args)
    assert result.returncode == 2
    assert "usage:" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["partition", "compare", "explain", "demo"])
def test_help_has_examples_and_exit_codes(ws_solver, command: str) -> None:
    result = ws_solver(command, "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout and f"ws-solver {command}" in result.stdout
    assert "exit status:" in result.stdout
    assert "  2  bad input" in result.stdout

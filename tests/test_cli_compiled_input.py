"""TTGIR past the planner's input point (Triton's compiled `kernel.asm["ttgir"]`, already
split into `ttg.warp_specialize` regions, or lowered to LLVM) is refused by every command
with one line and exit 2, instead of its partition regions being planned as loops.

tests/data/compiled_gemm_tma.sm100.ttgir is stock Triton 3.6.0's final TTGIR of the corpus
kernel gemm_tma (config t128x128x64_w4_s4) compiled for sm_100 on the CPU, with the
checkout's and site-packages' folders cut from its locations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_cli_partition import one_error_line

from ws_solver.core.failures import ReportedError
from ws_solver.pipeline.inputs import parse_module

DATA = Path(__file__).resolve().parent / "data"
COMPILED = DATA / "compiled_gemm_tma.sm100.ttgir"
REPO = DATA.parent.parent
GEMM = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
SPLIT_LINE = next(
    n
    for n, line in enumerate(COMPILED.read_text().splitlines(), 1)
    if "ttg.warp_specialize(" in line
)


def expected_error(path: Path, line: int = SPLIT_LINE, op: str = "ttg.warp_specialize") -> str:
    return (
        f"ws-solver: {path}:{line}: already warp-specialized ({op}): this is compiled TTGIR, "
        "past the planner's input; plan the TTGIR Triton has before its warp specialization, "
        "which the drop-in writes with WS_SOLVER_DUMP=DIR"
    )


@pytest.mark.parametrize("command", ["graph", "partition", "explore", "explain", "compare"])
def test_each_command_refuses_compiled_ttgir(ws_solver, command: str, tmp_path: Path) -> None:
    result = (
        ws_solver(command, COMPILED, "--time-limit", "0.5")
        if command
        in (
            "partition",
            "explore",
            "compare",
        )
        else ws_solver(command, COMPILED)
    )
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == expected_error(COMPILED)
    assert "loop" not in result.stdout


def test_compare_reports_a_compiled_file_as_a_failed_input(ws_solver, tmp_path: Path) -> None:
    shutil.copy(GEMM, tmp_path / "gemm.ttgir")
    shutil.copy(COMPILED, tmp_path / "compiled.ttgir")
    report = tmp_path / "out.json"
    result = ws_solver("compare", tmp_path, "--time-limit", "0.5", "--json", report, "-q")
    assert result.returncode == 1, result.stderr
    assert expected_error(tmp_path / "compiled.ttgir") in result.stderr.splitlines()
    document = json.loads(report.read_text())
    assert {Path(loop["file"]).name for loop in document["loops"]} == {"gemm.ttgir"}
    [failure] = document["failures"]
    assert failure["file"] == str(tmp_path / "compiled.ttgir")
    assert failure["kind"] == "bad_input" and failure["exit_status"] == 2


def test_the_planner_input_is_accepted_and_lowered_ir_is_refused() -> None:
    assert parse_module("gemm", GEMM.read_text()).walk  # the corpus dump is the planner's input
    lowered = "module {\n  llvm.func @k() {\n    llvm.return\n  }\n}\n"
    with pytest.raises(ReportedError) as e:
        parse_module("k.ttgir", lowered)
    assert e.value.code == 2
    assert e.value.message.startswith("k.ttgir:2: already lowered to LLVM (llvm.func): ")


@pytest.mark.triton
@pytest.mark.triton36  # the sample is 3.6.0's text (3.9 writes descriptor types otherwise)
def test_the_compiled_sample_is_what_triton_prints() -> None:
    """The sample is Triton's own text: its parser reads it back, and printing it again gives
    the same ops (the sample is not a hand-written imitation)."""
    pytest.importorskip("triton")
    from triton_util import parse_with_triton

    text = COMPILED.read_text()
    module = parse_with_triton(text, 100)
    printed = module.str()
    for op in ("ttg.warp_specialize(", "ttg.warp_return", "partition0(", "partition1("):
        assert op in printed and op in text


def test_the_python_entry_points_refuse_compiled_ttgir() -> None:
    import ws_solver

    with pytest.raises(ReportedError, match="already warp-specialized"):
        ws_solver.explore(COMPILED, k=1)
    document = ws_solver.compare(COMPILED, time_limit=0.5)
    assert document["loops"] == [] and document["failures"][0]["kind"] == "bad_input"

"""`--triton-version`: which Triton release's lowering rules the CLI plans for (by default the
installed one when supported, else 3.6.0), and its error for any other value."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest
from test_cli_partition import one_error_line

from ws_solver.cli.demo import bundled_corpus
from ws_solver.triton.toolchain import versions

REPO = Path(__file__).resolve().parent.parent
FLAT = REPO / "corpus" / "ttgir-3.9" / "gemm_persistent.t128x128x64_gelu_flat_w4_s4.sm100.ttgir"
GEMM = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch) -> Path:
    folder = tmp_path_factory.mktemp("plan-cache")
    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(folder))
    return folder


def test_each_version_plans_by_its_rules(ws_solver, tmp_path: Path) -> None:
    """The flat persistent GEMM (sm_100): 3.6's heuristic plan (the epilogue if in partition
    0, the MMA in 1) breaks 3.9's R4, so planning for 3.9 the heuristic declines, saying why."""
    for version, specialized in (("3.6.0", True), ("3.9.0", False)):
        report = tmp_path / f"{version}.json"
        result = ws_solver(
            "partition", FLAT, "--strategy", "heuristic", "--triton-version", version,
            "--json", report,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        document = json.loads(report.read_text())
        assert document["triton"] == version
        (loop,) = document["loops"]
        assert loop["specialized"] is specialized
        if not specialized:
            assert "Triton 3.9 lowering rule R4" in loop["reason"]


@pytest.mark.parametrize(
    "command",
    [
        ("partition", GEMM),
        ("explain", GEMM),
        ("explore", GEMM),
        ("compare", GEMM),
        ("demo", "--out", "OUT"),
    ],
)
def test_unsupported_version_is_one_line_exit_2(ws_solver, tmp_path: Path, command) -> None:
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    result = ws_solver(*args, "--triton-version", "3.7.0")
    assert result.returncode == 2
    line = one_error_line(result)
    assert "--triton-version: Triton 3.7.0: " in line and "3.6.0, 3.9.0" in line
    assert not (tmp_path / "out").exists()


def test_help_teaches_the_option(ws_solver) -> None:
    result = ws_solver("partition", "--help")
    text = " ".join(result.stdout.split())
    assert "--triton-version V" in text
    assert "3.6.0 or 3.9.0 (default: the installed Triton's when it is one of them" in text


def test_compare_records_the_version(ws_solver, tmp_path: Path) -> None:
    report = tmp_path / "c.json"
    result = ws_solver("compare", FLAT, "--triton-version", "3.9.0", "--json", report, "-q")
    assert result.returncode == 0, result.stderr
    assert json.loads(report.read_text())["settings"]["triton"] == "3.9.0"
    assert "planned for Triton 3.9.0's lowering rules" in result.stdout


def test_default_is_the_installed_supported_version(monkeypatch) -> None:
    try:
        installed = metadata.version("triton")
    except metadata.PackageNotFoundError:
        installed = None
    expected = installed.split("+")[0] if installed in versions.SUPPORTED else "3.6.0"
    assert versions.planning_version() == expected

    def fake(found: str | None):
        def version(name: str) -> str:
            if found is None:
                raise metadata.PackageNotFoundError(name)
            return found

        return version

    for found, planned in (
        ("3.9.0", "3.9.0"),
        ("3.6.0", "3.6.0"),
        ("3.7.0", "3.6.0"),
        (None, "3.6.0"),
    ):
        monkeypatch.setattr(versions.metadata, "version", fake(found))
        assert versions.planning_version() == planned


def test_demo_reads_the_versions_corpus() -> None:
    assert bundled_corpus("3.6.0").name == "ttgir"
    assert bundled_corpus("3.9.0").name == "ttgir-3.9"

"""`ws-solver compare`, driven as a user would: a subprocess over corpus files and bad ones."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ws_solver.core.options import DEFAULT_WORKERS

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
# A small but varied subset: specialized by both, declined by the heuristic, nothing to
# overlap, two loops in one file; each solves in about a second at most.
SUBSET = (
    "attention_fwd.d64_m128n64_w4_s3.sm100.ttgir",
    "gemm_cond_reset.t128x128x64_g128_w4_s4.sm90.ttgir",
    "gemm_tma.t128x128x64_w4_s4.sm100.ttgir",
    "row_reduce.r4_n1024_w4_s3.sm90.ttgir",
)
TIME_LIMIT = "0.5"


@pytest.fixture(scope="module")
def subset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("subset")
    for name in SUBSET:
        shutil.copy(CORPUS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def runs(ws_solver, subset: Path, tmp_path_factory) -> dict:
    """The subset compared with --jobs 1 and --jobs 2 (JSON and both reports)."""
    out = tmp_path_factory.mktemp("runs")
    results = {}
    for jobs in ("1", "2"):
        json_path = out / f"jobs{jobs}.json"
        md, html = out / f"jobs{jobs}.md", out / f"jobs{jobs}.html"
        result = ws_solver(
            "compare",
            subset,
            "--jobs",
            jobs,
            "--time-limit",
            TIME_LIMIT,
            "--json",
            json_path,
            "--report",
            md if jobs == "1" else html,
            "--triton-version",  # corpus/ttgir is 3.6.0's dump: its rules, under any Triton
            "3.6.0",
        )
        results[jobs] = (result, json.loads(json_path.read_text()) if json_path.exists() else None)
    results["md"] = (out / "jobs1.md").read_text()
    results["html"] = (out / "jobs2.html").read_text()
    results["json_text"] = (out / "jobs1.json").read_text()
    return results


@pytest.mark.slow
def test_json_is_identical_for_any_jobs(runs: dict) -> None:
    (r1, d1), (r2, d2) = runs["1"], runs["2"]
    assert r1.returncode == 0, r1.stderr
    assert r2.returncode == 0, r2.stderr
    assert d1["timing"]["jobs"] == 1 and d2["timing"]["jobs"] == 2
    deterministic = {k: v for k, v in d1.items() if k != "timing"}
    assert deterministic == {k: v for k, v in d2.items() if k != "timing"}
    raw = runs["json_text"]
    assert raw == json.dumps(d1, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.slow
def test_json_content(runs: dict, subset: Path) -> None:
    _, document = runs["1"]
    assert document["schema"] == "ws-solver.compare" and document["version"] == 1
    settings = {
        "cache": False,
        "seed": 0,
        "time_limit": 0.5,
        "workers": DEFAULT_WORKERS,
        "triton": "3.6.0",
    }
    assert document["settings"] == settings
    assert document["files"] == 4 and document["failures"] == []
    loops = document["loops"]
    assert [(Path(r["file"]).name, r["loop"]) for r in loops] == [(n, 0) for n in sorted(SUBSET)]
    for r in loops:
        h, o = r["heuristic"], r["optimal"]
        assert o["ii"] <= h["ii"]  # warm-started from the heuristic: never worse
        assert r["better"] in ("optimal", "same")
        for side in (h, o):
            assert len(side["warps"]) == len(side["registers"]) == side["partitions"]
            assert side["violations"] == []
        if o["status"] == "OPTIMAL":
            assert o["bound_ii"] == o["ii"] and o["gap"] == 0
    by_name = {Path(r["file"]).name: r for r in loops}
    assert by_name["row_reduce.r4_n1024_w4_s3.sm90.ttgir"]["optimal"]["status"] == "SKIPPED"
    attention = by_name["attention_fwd.d64_m128n64_w4_s3.sm100.ttgir"]
    assert attention["better"] == "optimal" and attention["ii_reduction"] > 0
    changes = {o["change"] for o in attention["overrides"]}
    assert changes <= {"split", "joined", "specialize"} and changes
    for o in attention["overrides"]:
        if o["change"] == "split":
            assert o["rule"] and o["src_label"] and o["dst_label"]
    summary = document["summary"]
    assert summary["loops"] == 4 and summary["failed"] == 0
    assert summary["optimal_better"]["loops"] == sum(r["better"] == "optimal" for r in loops)
    assert summary["proven_optimal"]["solved"] == 3
    timing = document["timing"]
    assert len(timing["loops"]) == 4
    assert set(timing["optimal_wall_s"]) == {"p50", "p90", "p99", "max", "sum"}


@pytest.mark.slow
def test_reports(runs: dict) -> None:
    md, html = runs["md"], runs["html"]
    assert md.startswith("# ws-solver: heuristic vs optimal")
    assert "| file | kernel | loop | ops | II heur | II opt |" in md
    assert "## Where the optimum overrode the heuristic" in md
    assert "proven optimal:" in md
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert html.count('<img src="data:image/png;base64,') == 2
    assert "<table>" in html and "attention_fwd_kernel" in html
    # stdout is the summary and where the files went; progress went to stderr, plain lines.
    result, _ = runs["1"]
    assert "wrote " in result.stdout and "optimal strictly better" in result.stdout
    assert "[1/4] " in result.stderr and "[4/4] " in result.stderr


def test_text_table_on_stdout(ws_solver, subset: Path) -> None:
    result = ws_solver("compare", subset / SUBSET[1], "--time-limit", TIME_LIMIT, "-q")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["file", "kernel", "loop", "ops", "II", "heur"]
    assert lines[1].startswith("gemm_cond_reset.t128x128x64_g128_w4_s4.sm90")
    assert any(line.startswith("proven optimal:") for line in lines)


def test_bad_files_are_reported_and_the_rest_still_run(ws_solver, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(GEMM, folder / "good.ttgir")
    (folder / "garbage.ttgir").write_text("module {\n  %0 = \n")
    (folder / "empty.ttgir").write_text('module attributes {ttg.target = "cuda:90"} {\n}\n')
    text = (
        GEMM.read_text().replace("128x64xf16", "1024x64xf16").replace("64x128xf16", "64x1024xf16")
    )
    (folder / "infeasible.ttgir").write_text(text)
    report = tmp_path / "r.json"
    result = ws_solver(
        "compare",
        folder,
        tmp_path / "missing.ttgir",
        "--time-limit",
        TIME_LIMIT,
        "--json",
        report,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ws-solver: ")]
    assert len(errors) == 4, result.stderr
    assert any(f"{folder / 'garbage.ttgir'}:" in e for e in errors)
    assert any("empty.ttgir: no loop carries tt.warp_specialize" in e for e in errors)
    assert any("infeasible.ttgir:42: gemm_tma_kernel loop 0: infeasible" in e for e in errors)
    assert any("missing.ttgir: no such file or directory" in e for e in errors)
    document = json.loads(report.read_text())
    assert [Path(r["file"]).name for r in document["loops"]] == ["good.ttgir"]
    kinds = sorted(
        (Path(f["file"]).name, f["kind"], f["exit_status"]) for f in document["failures"]
    )
    assert kinds == [
        ("empty.ttgir", "bad_input", 2),
        ("garbage.ttgir", "bad_input", 2),
        ("infeasible.ttgir", "infeasible", 4),
        ("missing.ttgir", "bad_input", 2),
    ]
    assert document["summary"]["failed"] == 4


def test_only_bad_input_exits_2_and_writes_nothing(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text("not mlir at all {")
    report, json_path = tmp_path / "r.html", tmp_path / "r.json"
    result = ws_solver("compare", bad, "--report", report, "--json", json_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"ws-solver: {bad}:")
    result = ws_solver("compare", GEMM, "--report", tmp_path / "r.pdf", "--json", json_path)
    assert result.returncode == 2
    assert "--report must end in .md or .html" in result.stderr
    result = ws_solver("compare", GEMM, "--json", tmp_path / "no" / "dir" / "r.json")
    assert result.returncode == 2 and "cannot write" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ttgir"]


def test_progress_bar_on_a_terminal(subset: Path) -> None:
    """With stderr on a terminal, progress is a rich bar (no plain per-loop lines)."""
    controller, terminal = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the terminal side is closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="100", TERM="xterm")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ws_solver", "compare", str(subset / SUBSET[3])],
            stdout=subprocess.PIPE,
            stderr=terminal,
            cwd=REPO,
            env=env,
            timeout=120,
        )
    finally:
        os.close(terminal)
        reader.join(timeout=10)
        os.close(controller)
    assert result.returncode == 0
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert "[1/1]" not in shown
    assert "compare" in shown and "\x1b[" in shown  # drawn with terminal control sequences
    assert b"row_reduce" in result.stdout


def test_stock_column_is_stocks_recorded_decision(ws_solver, tmp_path: Path) -> None:
    """Beside its index, a corpus dump's loops show stock Triton's recorded decision and
    whether ws_solver's differs; a copy of the same file (no record beside it) is unknown."""
    from ws_solver.pipeline.comparison import decided_specialized
    from ws_solver.pipeline.stock import index_entries

    name = "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"
    recorded = index_entries(CORPUS)[name]["stock"]["loops"][0]
    copy = tmp_path / "mine.ttgir"
    shutil.copy(CORPUS / name, copy)
    args = ("--time-limit", TIME_LIMIT, "-q", "--triton-version", "3.6.0")
    result = ws_solver("compare", CORPUS / name, copy, *args, "--json", tmp_path / "c.json")
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "c.json").read_text())
    by_file = {Path(r["file"]).name: r for r in document["loops"]}
    ours, mine = by_file[name], by_file["mine.ttgir"]
    assert ours["stock"]["decision"] == ("specialized" if recorded else "unspecialized")
    assert ours["stock"]["differs"] == (decided_specialized(ours) != recorded)
    assert ours["stock"]["triton"] == "3.6.0" and ours["stock"]["target"] == "sm90"
    assert mine["stock"] == {"decision": "unknown", "differs": None}
    summary = document["summary"]["stock"]
    assert (summary["known"], summary["unknown"]) == (1, 1)
    assert summary["differs"] == int(ours["stock"]["differs"])
    assert "stock Triton's decision (recorded with the dumps: 3.6.0 sm90)" in result.stdout

    text = ws_solver("compare", CORPUS / name, *args)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[-1] == "stock"
    word = "WS" if recorded else "no WS"
    assert lines[1].endswith(f"  {word} ≠" if ours["stock"]["differs"] else f"  {word}")

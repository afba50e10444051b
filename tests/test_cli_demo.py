"""`ws-solver demo` on a small corpus subset: it finishes, writes the report folder and prints
its path; the HTML renders (headless Chromium, when installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ws_solver.cli.demo import bundled_corpus

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
SUBSET = (
    "attention_fwd.d64_m128n64_w4_s3.sm90.ttgir",
    "gemm_tma.t128x128x64_w4_s4.sm90.ttgir",
    "row_reduce.r4_n1024_w4_s3.sm100.ttgir",
)


@pytest.fixture(scope="module")
def demo(ws_solver, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path, float]:
    base = tmp_path_factory.mktemp("demo")
    corpus = base / "corpus"
    corpus.mkdir()
    for name in SUBSET:
        shutil.copy(CORPUS / name, corpus / name)
    out = base / "report"
    start = time.perf_counter()
    result = ws_solver(
        "demo", "--corpus", corpus, "--out", out, "--time-limit", "0.5", "--jobs", "2"
    )
    return result, out, time.perf_counter() - start


@pytest.mark.slow
def test_demo_writes_the_report_folder(demo) -> None:
    result, out, seconds = demo
    assert result.returncode == 0, result.stderr
    assert seconds < 90
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.json",
        "ii.png",
        "report.html",
        "report.md",
        "solve_time.png",
    ]
    lines = result.stdout.splitlines()
    assert f"report folder: {out.resolve()}" in lines
    assert lines[-1].strip() == f"open {out.resolve() / 'report.html'} in a browser"
    document = json.loads((out / "compare.json").read_text())
    assert document["summary"]["loops"] == 3
    md = (out / "report.md").read_text()
    assert "![Heuristic vs optimal II per loop](ii.png)" in md
    assert "![Solve-time histogram](solve_time.png)" in md
    html = (out / "report.html").read_text()
    assert html.count('<img src="data:image/png;base64,') == 2
    for png in ("ii.png", "solve_time.png"):
        assert (out / png).read_bytes().startswith(b"\x89PNG")


def test_demo_bad_paths(ws_solver, tmp_path: Path) -> None:
    result = ws_solver("demo", "--out", tmp_path / "file", "--corpus", tmp_path / "nope")
    assert result.returncode == 2 and "no such file or directory" in result.stderr
    (tmp_path / "file").write_text("x")
    result = ws_solver("demo", "--out", tmp_path / "file")
    assert result.returncode == 2 and "not a directory" in result.stderr
    assert (tmp_path / "file").read_text() == "x"


def test_bundled_corpus_is_found_from_anywhere(ws_solver, tmp_path: Path) -> None:
    assert bundled_corpus() == CORPUS
    result = ws_solver("demo", "--help", cwd=tmp_path)
    assert result.returncode == 0 and "corpus/ttgir" in result.stdout


def test_the_corpus_command_prints_the_bundled_folder(ws_solver, tmp_path: Path) -> None:
    """`ws-solver corpus` from another folder names the corpus that demo runs on, and what
    `--list` prints are its files, which the other commands read from anywhere."""
    result = ws_solver("corpus", "--triton-version", "3.6.0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{CORPUS}\n"
    result = ws_solver("corpus", "--triton-version", "3.9.0", "--list", cwd=tmp_path)
    listed = result.stdout.splitlines()
    assert listed == sorted(str(p) for p in (REPO / "corpus" / "ttgir-3.9").glob("*.ttgir"))
    graph = ws_solver("graph", listed[0], "--format", "table", cwd=tmp_path)
    assert graph.returncode == 0 and Path(listed[0]).name in graph.stdout
    result = ws_solver("corpus", "--triton-version", "3.7.0", cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1


def test_corpus_path_is_public() -> None:
    import ws_solver

    assert ws_solver.corpus_path("3.6.0") == CORPUS
    assert ws_solver.corpus_path("3.9.0+git1234").name == "ttgir-3.9"
    assert ws_solver.corpus_path() == CORPUS  # 3.6.0, as ws_solver.compare's default


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chromium-headless-shell"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="no Chromium to render the HTML with")
def test_html_renders_in_headless_chromium(demo, tmp_path: Path) -> None:
    _, out, _ = demo
    shot = tmp_path / "shot.png"
    result = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,2000",
            f"--screenshot={shot}",
            (out / "report.html").resolve().as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # not a blank page

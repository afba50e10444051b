"""`ws_solver.compare(...)`: the library function behind `ws-solver compare`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ws_solver
from ws_solver.backends import open_backend
from ws_solver.pipeline.comparison import deterministic_part

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
REDUCE = CORPUS / "row_reduce.r4_n1024_w4_s3.sm90.ttgir"
SETTINGS = {"time_limit": 0.5, "workers": 1, "seed": 0, "triton": "3.6.0"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Path:
    """A folder with two small corpus files (one loop each, about a second to solve)."""
    folder = tmp_path_factory.mktemp("pair")
    for path in (GEMM, REDUCE):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="module")
def document(pair: Path) -> dict:
    return ws_solver.compare(pair, **SETTINGS)


def test_import_stays_cheap() -> None:
    code = "import sys, ws_solver; print('ws_solver.pipeline' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.slow
def test_the_same_document_as_the_commands_json(document: dict, pair: Path, ws_solver, tmp_path):
    out = tmp_path / "compare.json"
    args = ["--time-limit", "0.5", "--workers", "1", "--triton-version", "3.6.0"]
    result = ws_solver("compare", pair, *args, "--json", out)
    assert result.returncode == 0, result.stderr
    cli = json.loads(out.read_text())
    assert deterministic_part(document) == deterministic_part(cli)
    assert [r["file"] for r in document["loops"]] == [str(pair / p.name) for p in (GEMM, REDUCE)]
    assert document["settings"]["triton"] == "3.6.0" and document["summary"]["loops"] == 2


@pytest.mark.slow
def test_a_backend_gives_the_same_document(document: dict, pair: Path) -> None:
    with open_backend("local", 2) as backend:
        on_two = ws_solver.compare([pair], backend=backend, **SETTINGS)
    assert deterministic_part(on_two) == deterministic_part(document)
    assert on_two["timing"]["jobs"] == 2 and document["timing"]["jobs"] == 1


def test_text_is_compared_as_its_file_is() -> None:
    from_path = ws_solver.compare(GEMM, **SETTINGS)
    from_text = ws_solver.compare(GEMM.read_text(), **SETTINGS)
    [by_path], [by_text] = from_path["loops"], from_text["loops"]
    assert by_path["file"] == str(GEMM) and by_text["file"] == "<text>"
    assert by_text["stock"] == {"decision": "unknown", "differs": None}  # no recorded dump
    for side in ("heuristic", "optimal"):
        assert by_text[side] == by_path[side]


def test_bad_inputs_are_failures_and_the_rest_is_compared(tmp_path: Path) -> None:
    found = ws_solver.compare(
        [tmp_path / "missing.ttgir", "# not TTGIR\n", GEMM.read_text()], **SETTINGS
    )
    assert found["files"] == 2 and [r["file"] for r in found["loops"]] == ["<text 1>"]
    failures = {f["file"]: f for f in found["failures"]}
    assert failures[str(tmp_path / "missing.ttgir")]["message"].endswith(
        "no such file or directory"
    )
    assert failures["<text 0>"]["kind"] == "bad_input" and failures["<text 0>"]["exit_status"] == 2
    assert failures["<text 0>"]["message"] == "<text 0>:1:1: unexpected '#'"

"""The committed TTGIR corpus: index consistency, WS loops, reproducibility, parseability."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import corpus
from corpus.dump import count_ws_loops

REPO_ROOT = Path(__file__).resolve().parent.parent

TTGIR_DIR = corpus.ttgir_dir()
INDEX = json.loads((TTGIR_DIR / "index.json").read_text())


def _text(entry: dict) -> str:
    return (TTGIR_DIR / entry["file"]).read_text()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _ws_loop_bodies(text: str) -> list[str]:
    """Bodies of the loops tagged tt.warp_specialize, found by the closing brace's indent."""
    lines = text.splitlines()
    bodies = []
    for end, line in enumerate(lines):
        if line.lstrip().startswith("}") and "tt.warp_specialize" in line:
            depth = _indent(line)
            start = end - 1
            while not (_indent(lines[start]) == depth and "scf.for" in lines[start]):
                start -= 1
            bodies.append("\n".join(lines[start + 1 : end]))
    return bodies


def test_index_is_sorted_and_complete() -> None:
    files = [e["file"] for e in INDEX]
    assert files == sorted(files)
    assert {p.name for p in TTGIR_DIR.glob("*.ttgir")} == set(files)
    assert {e["target"] for e in INDEX} == {"sm90", "sm100"}


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"])
def test_dump_has_ws_loop(entry: dict) -> None:
    text = _text(entry)
    assert entry["ws_loops"] >= 1
    assert count_ws_loops(text) == entry["ws_loops"] == len(_ws_loop_bodies(text))


def test_dumps_are_machine_independent() -> None:
    for entry in INDEX:
        files = set(re.findall(r'loc\("([^"]+)":\d+:\d+\)', _text(entry)))
        assert files, entry["file"]
        bad = [f for f in files if not f.startswith(("corpus/", "triton/"))]
        assert not bad, (entry["file"], bad)


def test_cond_reset_has_if_inside_ws_loop() -> None:
    entries = [e for e in INDEX if e["kernel"] == "gemm_cond_reset"]
    assert entries
    for entry in entries:
        assert any("scf.if" in body for body in _ws_loop_bodies(_text(entry))), entry["file"]


def test_causal_attention_has_two_ws_loops() -> None:
    causal = [e for e in INDEX if e["kernel"] == "attention_fwd" and e["constexprs"]["CAUSAL"]]
    assert causal and all(e["ws_loops"] == 2 for e in causal)


@pytest.mark.triton
def test_redump_is_byte_identical(tmp_path: Path) -> None:
    from corpus import dump

    name = "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
    assert dump.main(["--out", str(tmp_path), "--only", name]) == 0
    assert (tmp_path / name).read_bytes() == (TTGIR_DIR / name).read_bytes()
    [entry] = json.loads((tmp_path / "index.json").read_text())
    assert entry == next(e for e in INDEX if e["file"] == name)


@pytest.mark.triton
def test_partial_redump_drops_configs_that_are_gone(tmp_path: Path) -> None:
    """Dumps and index entries of configs that no longer exist go, in an --only run too."""
    from corpus import dump

    only = "gemm_tma.t128x128x64_w4_s4.sm90"
    gone, kept = f"{only}_old.ttgir", "row_reduce.other.sm90.ttgir"
    for name in (gone, kept):
        (tmp_path / name).write_text("dumped before")
    old_index = [{"file": name, "ws_loops": 1} for name in (gone, kept)]
    (tmp_path / "index.json").write_text(json.dumps(old_index))
    assert dump.main(["--out", str(tmp_path), "--only", only]) == 0
    assert not (tmp_path / gone).exists() and not (tmp_path / kept).exists()
    index = json.loads((tmp_path / "index.json").read_text())
    assert [e["file"] for e in index] == [f"{only}.ttgir"]


@pytest.mark.triton
def test_committed_dumps_parse() -> None:
    from corpus.dump import verify_parses

    for entry in INDEX:
        verify_parses(_text(entry))


@pytest.mark.triton
def test_split_pipeline_matches_make_ttgir() -> None:
    """run_until_partition + run_after_partition with no annotations is Triton's sm_100 route."""
    from triton.backends.nvidia.compiler import CUDABackend

    from corpus.dump import Job, capture
    from ws_solver.triton.toolchain.make_ttgir import make_ttgir_stage

    def stock(options, capability):
        return lambda mod, md: CUDABackend.make_ttgir(mod, md, options, capability)

    def split(options, capability):
        return make_ttgir_stage(lambda text: text, options, capability)

    job = Job("gemm_tma", "t128x128x64_w4_s4", "sm100")
    text = capture(job, split)
    assert text == capture(job, stock)
    assert "ttg.warp_specialize" in text
    assert "ttg.warp_specialize" in capture(Job(job.kernel, job.config, "sm90"), split)

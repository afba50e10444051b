"""`ws-solver graph`, driven as a user would: a subprocess, exit codes, stdout, stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.cli.common import CliError, write_output
from ws_solver.model import build_graphs

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
PERSISTENT = CORPUS / "gemm_persistent.t128x256x64_relu_w8_s3.sm100.ttgir"
TWO_LOOPS = CORPUS / "attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir"
GARBAGE = "module {\n  tt.func @f() {\n    %0 = arith.addi %x, : i32\n  }\n}\n"
NO_WS_LOOP = 'module attributes {"ttg.num-warps" = 4 : i32} {\n}\n'


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ws-solver: ")
    return lines[0]


def graphs(path: Path):
    return build_graphs(ir.parse(path.read_text()))


# -- formats --------------------------------------------------------------------------------


def test_text(ws_solver) -> None:
    result = ws_solver("graph", GEMM)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    header = lines[0]
    for part in (str(GEMM), "gemm_tma_kernel", "loop 0", "cuda:90", "num_warps 4"):
        assert part in header
    assert "nodes 9" in header and "edges 10" in header
    assert lines[1].split() == [
        "id",
        "kind",
        "role",
        "op",
        "label",
        "elements",
        "bytes",
        "stage",
        "out-edges",
    ]
    rows = {int(line.split()[0]): line for line in lines[2:]}
    assert sorted(rows) == list(range(9))
    assert rows[7].split()[1:5] == ["MMA", "op", "ttng.warp_group_dot", "%acc_23"]
    assert "→ 0 (%acc_23, 65536 B, d=1)" in rows[7]
    assert "→ 8 (%acc_23, 65536 B, d=0)" in rows[7]
    assert rows[2].split()[1:3] == ["LOAD", "op"]
    assert rows[8].rstrip().endswith("-")  # the yield has no out-edges


def test_text_two_loops_by_default(ws_solver) -> None:
    result = ws_solver("graph", TWO_LOOPS)
    assert result.returncode == 0, result.stderr
    headers = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert len(headers) == 2
    assert "loop 0" in headers[0] and "loop 1" in headers[1]


JSON_LOOP_KEYS = {
    "file",
    "kernel",
    "loop_index",
    "name",
    "target",
    "num_warps",
    "line",
    "scheduled_max_stage",
    "buffers",
    "nodes",
    "edges",
}
JSON_NODE_KEYS = {
    "id",
    "role",
    "kind",
    "op_name",
    "label",
    "op_index",
    "result_index",
    "parent",
    "follows_parent",
    "value_kind",
    "elements",
    "out_bytes",
    "io_bytes",
    "mma",
    "buffers",
    "stage",
    "cluster",
    "line",
    "location",
}
JSON_EDGE_KEYS = {
    "src",
    "dst",
    "distance",
    "value",
    "value_kind",
    "bytes",
    "elements",
    "memory",
    "carried_by",
    "use",
}


def test_json_matches_the_documented_schema(ws_solver) -> None:
    result = ws_solver("graph", PERSISTENT, "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == "ws-solver.graph" and doc["version"] == 1
    (loop,) = doc["loops"]
    (graph,) = graphs(PERSISTENT)
    assert set(loop) == JSON_LOOP_KEYS
    assert loop["file"] == str(PERSISTENT)
    assert (loop["kernel"], loop["loop_index"], loop["target"]) == (
        graph.kernel,
        0,
        "cuda:100",
    )
    assert len(loop["nodes"]) == len(graph.nodes) and len(loop["edges"]) == len(graph.edges)
    for node, want in zip(loop["nodes"], graph.nodes, strict=True):
        assert set(node) == JSON_NODE_KEYS
        assert (node["id"], node["kind"], node["role"]) == (want.id, want.kind, want.role)
        assert node["op_name"] == want.op_name and node["parent"] == want.parent
    for edge, want in zip(loop["edges"], graph.edges, strict=True):
        assert set(edge) == JSON_EDGE_KEYS
        assert (edge["src"], edge["dst"], edge["distance"]) == (want.src, want.dst, want.distance)
        assert edge["use"] == (list(want.use) if want.use else None)
    (mma,) = [n for n in loop["nodes"] if n["kind"] == "MMA"]
    assert mma["mma"] == {
        "m": 128,
        "n": 256,
        "k": 64,
        "operand_type": "f16",
        "accumulator_in_registers": False,
        "flops": 2 * 128 * 256 * 64,
    }
    assert {b["memory"] for b in loop["buffers"]} == {"shared", "tensor"}


def test_dot(ws_solver) -> None:
    result = ws_solver("graph", PERSISTENT, "--format", "dot")
    assert result.returncode == 0, result.stderr
    dot = result.stdout
    (graph,) = graphs(PERSISTENT)
    assert dot.startswith("digraph ") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    node_lines = re.findall(r"^\s*n(\d+) \[label=", dot, flags=re.M)
    assert sorted(map(int, node_lines)) == [n.id for n in graph.nodes]
    edge_lines = re.findall(r"^\s*n(\d+) -> n(\d+) \[(.*)\];$", dot, flags=re.M)
    assert len(edge_lines) == len(graph.edges)
    dashed = [e for e in edge_lines if "style=dashed" in e[2]]
    assert len(dashed) == sum(e.distance == 1 for e in graph.edges) > 0
    (inner_loop,) = [n for n in graph.nodes if n.op_name == "scf.for" and n.role == "op"]
    assert f"subgraph cluster_{inner_loop.id} {{" in dot
    assert 'fillcolor="#fdd835"' in dot  # MMA colour


def test_table_over_the_corpus_directory(ws_solver) -> None:
    result = ws_solver("graph", "corpus/ttgir", "--format", "table", cwd=REPO)  # as in `make demo`
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "file",
        "kernel",
        "loop",
        "target",
        "ops",
        "values",
        "edges",
        "LOAD",
        "MMA",
        "STORE",
        "SFU",
        "TMEM",
    ]
    index = json.loads((CORPUS / "index.json").read_text())
    rows = [line.split() for line in lines[1:-1]]
    assert len(rows) == sum(e["ws_loops"] for e in index)
    assert lines[-1] == f"{len(rows)} loops in {len(index)} files"
    by_file = {}
    for row in rows:
        by_file.setdefault(Path(row[0]).name, []).append(row)
    gemm = by_file[GEMM.name]
    counts = ["7", "1", "10", "2", "1", "0", "0", "0"]  # ops values edges LOAD MMA STORE SFU TMEM
    assert gemm == [["corpus/ttgir/" + GEMM.name, "gemm_tma_kernel", "0", "sm_90", *counts]]
    for name, file_rows in by_file.items():
        assert [r[2] for r in file_rows] == [str(i) for i in range(len(file_rows))]
        if name.startswith("row_reduce."):
            assert all(r[8] == "0" for r in file_rows)  # no MMA


def test_output_to_file_equals_stdout(ws_solver, tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    result = ws_solver("graph", GEMM, "--format", "json", "-o", out)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    assert out.read_text() == ws_solver("graph", GEMM, "--format", "json").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json"]


# -- loop selection -------------------------------------------------------------------------


def test_loop_selection(ws_solver) -> None:
    result = ws_solver("graph", TWO_LOOPS, "--loop", "1", "--format", "json")
    assert result.returncode == 0, result.stderr
    (loop,) = json.loads(result.stdout)["loops"]
    assert loop["loop_index"] == 1
    assert len(loop["nodes"]) == len(graphs(TWO_LOOPS)[1].nodes)
    text = ws_solver("graph", TWO_LOOPS, "--loop", "0").stdout
    assert [line for line in text.splitlines() if line.startswith("== ")][0].count("loop 0")


def test_loop_out_of_range(ws_solver) -> None:
    result = ws_solver("graph", GEMM, "--loop", "1")
    assert result.returncode == 2
    assert result.stdout == ""
    line = one_error_line(result)
    assert str(GEMM) in line and "no loop 1" in line and "1 warp-specialized loop" in line


def test_negative_loop_is_a_usage_error(ws_solver) -> None:
    result = ws_solver("graph", GEMM, "--loop", "-1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "loop index must be >= 0" in result.stderr


# -- errors ---------------------------------------------------------------------------------


def test_garbage_file(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text(GARBAGE)
    for fmt in ("text", "json", "dot"):
        result = ws_solver("graph", bad, "--format", fmt)
        assert result.returncode == 2
        assert result.stdout == ""
        line = one_error_line(result)
        assert re.fullmatch(rf"ws-solver: {re.escape(str(bad))}:3:\d+: .+", line), line


def test_binary_file(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bin.ttgir"
    bad.write_bytes(b"module {\n\xff\xfe\n}\n")
    result = ws_solver("graph", bad)
    assert result.returncode == 2
    assert one_error_line(result) == f"ws-solver: {bad}:2:1: not UTF-8 text"


def test_missing_file(ws_solver, tmp_path: Path) -> None:
    missing = tmp_path / "missing.ttgir"
    result = ws_solver("graph", missing)
    assert result.returncode == 2
    assert one_error_line(result) == f"ws-solver: {missing}: no such file or directory"
    result = ws_solver("graph", tmp_path, "--format", "table")  # a folder with no *.ttgir
    assert result.returncode == 2
    assert "no *.ttgir files" in one_error_line(result)


def test_file_without_ws_loop(ws_solver, tmp_path: Path) -> None:
    plain = tmp_path / "plain.ttgir"
    plain.write_text(NO_WS_LOOP)
    result = ws_solver("graph", plain)
    assert result.returncode == 2
    assert one_error_line(result) == f"ws-solver: {plain}: no loop carries tt.warp_specialize"


def test_table_reports_failures_and_goes_on(ws_solver, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    good = tmp_path / "sub" / GEMM.name
    good.write_text(GEMM.read_text())
    (tmp_path / "bad.ttgir").write_text(GARBAGE)
    (tmp_path / "plain.ttgir").write_text(NO_WS_LOOP)
    (tmp_path / "notes.txt").write_text("not TTGIR, not looked at")
    result = ws_solver("graph", tmp_path, "--format", "table")
    assert result.returncode == 1
    errors = result.stderr.splitlines()
    assert len(errors) == 2 and "Traceback" not in result.stderr
    assert errors[0].startswith(f"ws-solver: {tmp_path / 'bad.ttgir'}:3:")
    assert errors[1] == f"ws-solver: {tmp_path / 'plain.ttgir'}: no loop carries tt.warp_specialize"
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and lines[1].split()[0] == str(good)
    assert lines[2] == "1 loop in 1 file; 2 of 3 files failed"


def test_single_file_modes_stop_at_the_first_failure(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text(GARBAGE)
    result = ws_solver("graph", GEMM, bad)
    assert result.returncode == 2 and result.stdout == ""
    assert str(bad) in one_error_line(result)


# -- atomic output --------------------------------------------------------------------------


def test_failed_run_leaves_output_untouched(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text(GARBAGE)
    out = tmp_path / "out.txt"
    result = ws_solver("graph", bad, "-o", out)
    assert result.returncode == 2
    assert not out.exists()
    out.write_text("previous content\n")
    result = ws_solver("graph", bad, "--format", "json", "-o", out)
    assert result.returncode == 2
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ttgir", "out.txt"]


def test_output_into_missing_folder(ws_solver, tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "dir.txt"
    result = ws_solver("graph", GEMM, "-o", out)
    assert result.returncode == 2
    assert one_error_line(result).startswith(f"ws-solver: {out}: cannot write")


def test_interrupted_write_leaves_no_partial_file(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(CliError, match="No space left on device"):
        write_output("new content\n" * 1000, str(out))
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    monkeypatch.undo()
    write_output("new\n", str(out))
    assert out.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


# -- help and entry points ------------------------------------------------------------------


def test_help_has_an_example(ws_solver) -> None:
    result = ws_solver("graph", "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout
    assert 'ws-solver graph "$(ws-solver corpus)" --format table' in result.stdout


def test_version_and_usage(ws_solver) -> None:
    result = ws_solver("--version")
    assert result.returncode == 0 and result.stdout.strip() == "ws-solver 0.1.0"
    result = ws_solver()
    assert result.returncode == 2 and "COMMAND" in result.stderr
    result = ws_solver("graph")
    assert result.returncode == 2 and "FILE_OR_DIR" in result.stderr

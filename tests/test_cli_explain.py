"""`ws-solver explain`, driven as a user would: text, DOT, SVG and PNG of a plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
ATTENTION = CORPUS / "attention_fwd.d128_m128n128_w8_s2.sm90.ttgir"  # specialized (8 warps)
TWO_LOOPS = CORPUS / "attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir"
GEMM = CORPUS / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


def test_text_on_the_terminal(ws_solver, tmp_path: Path) -> None:
    result = ws_solver(
        "explain", ATTENTION, "--time-limit", "1", cache_dir=tmp_path / ".plan-cache"
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith(f"== {ATTENTION}  kernel attention_fwd_kernel  loop 0")
    assert "strategy optimal" in out and "decision: specialized" in out
    legend_line = r"^  p(\d) \S+: (\d+) warps?, (\d+) registers, busy (\d+) cycles"
    legend = re.findall(legend_line, out, re.M)
    assert len(legend) >= 2
    assert re.search(r"^crossing edges \(\d+\):$", out, re.M)
    assert re.search(r"-> \d+ \S+: %\S+, [\d.]+ (KiB|B); to p\d depth \d", out)
    # one row per node, with its partitions
    assert re.search(r"^ *7  p\d +MMA +ttng.warp_group_dot", out, re.M)


def test_every_loop_in_text_and_one_with_loop(ws_solver, tmp_path: Path) -> None:
    both = ws_solver(
        "explain", TWO_LOOPS, "--strategy", "heuristic", cache_dir=tmp_path / ".plan-cache"
    )
    assert both.returncode == 0, both.stderr
    assert both.stdout.count("== ") == 2
    second = ws_solver(
        "explain",
        TWO_LOOPS,
        "--strategy",
        "heuristic",
        "--loop",
        "1",
        cache_dir=tmp_path / ".plan-cache",
    )
    assert second.stdout.count("== ") == 1 and "loop 1 (line" in second.stdout
    bad = ws_solver("explain", TWO_LOOPS, "--loop", "2", cache_dir=tmp_path / ".plan-cache")
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        f"ws-solver: {TWO_LOOPS}: no loop 2: the file has 2 warp-specialized loops (0..1)"
    )


def test_dot(ws_solver, tmp_path: Path) -> None:
    out = tmp_path / "plan.dot"
    result = ws_solver(
        "explain",
        ATTENTION,
        "--strategy",
        "heuristic",
        "-o",
        out,
        cache_dir=tmp_path / ".plan-cache",
    )
    assert result.returncode == 0, result.stderr
    dot = out.read_text()
    assert dot.startswith("digraph ") and dot.rstrip().endswith("}")
    assert "cluster_legend" in dot and "warps" in dot
    assert 'color="#d62828", penwidth=2' in dot  # crossing edges, labelled with bytes
    assert dot.count("{") == dot.count("}")


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".png", b"\x89PNG\r\n\x1a\n")])
def test_drawings(ws_solver, tmp_path: Path, suffix: str, magic: bytes) -> None:
    out = tmp_path / f"plan{suffix}"
    result = ws_solver(
        "explain",
        TWO_LOOPS,
        "--strategy",
        "heuristic",
        "-o",
        out,
        cache_dir=tmp_path / ".plan-cache",
    )  # a drawing shows loop 0 unless --loop
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    assert data.startswith(magic) and len(data) > 10_000
    if suffix == ".svg":
        text = data.decode()
        assert "</svg>" in text and "crossing edge" in text and "warps" in text


def test_bad_inputs_write_nothing(ws_solver, tmp_path: Path) -> None:
    result = ws_solver(
        "explain", ATTENTION, "-o", tmp_path / "plan.pdf", cache_dir=tmp_path / ".plan-cache"
    )
    assert result.returncode == 2 and "unknown output format" in result.stderr
    garbage = tmp_path / "garbage.ttgir"
    garbage.write_text("module {\n  %0 = \n")
    result = ws_solver(
        "explain", garbage, "-o", tmp_path / "plan.svg", cache_dir=tmp_path / ".plan-cache"
    )
    assert result.returncode == 2 and result.stderr.startswith(f"ws-solver: {garbage}:")
    infeasible = tmp_path / "infeasible.ttgir"
    infeasible.write_text(
        GEMM.read_text().replace("128x64xf16", "1024x64xf16").replace("64x128xf16", "64x1024xf16")
    )
    result = ws_solver(
        "explain", infeasible, "-o", tmp_path / "plan.png", cache_dir=tmp_path / ".plan-cache"
    )
    assert result.returncode == 4
    assert result.stderr.startswith(f"ws-solver: {infeasible}:42: gemm_tma_kernel loop 0: ")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".plan-cache") == [
        "garbage.ttgir",
        "infeasible.ttgir",
    ]


WIDE_GEMM = CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"  # a 4-warp load partition


def test_explain_says_when_triton_may_shrink_a_partition(ws_solver, tmp_path: Path) -> None:
    """Triton sizes partition regions itself: the 4-warp load partition the plan has may run
    fewer warps, and explain says so; an unspecialized loop gets no such note."""
    result = ws_solver(
        "explain", WIDE_GEMM, "--time-limit", "2", "--triton-version", "3.6.0", cache_dir=tmp_path
    )
    assert result.returncode == 0, result.stderr
    notes = re.findall(
        r"^  p(\d) \S+: planned at (\d+) warps, may compile to as few as (\d)$", result.stdout, re.M
    )
    assert "warps in the binary: Triton's optimize_partition_warps" in result.stdout
    assert [(p, planned) for p, planned, _ in notes] == [("1", "4")]
    assert all(int(fewest) < int(planned) for _, planned, fewest in notes)
    plain = ws_solver("explain", GEMM, "--strategy", "none", cache_dir=tmp_path)
    assert plain.returncode == 0 and "warps in the binary" not in plain.stdout


@pytest.mark.triton
@pytest.mark.triton36  # 3.9 does not specialize this config
def test_the_warps_triton_keeps_are_within_what_explain_says(tmp_path: Path) -> None:
    """Compiled on the CPU, the same plan's load partition runs fewer warps than planned and
    no fewer than explain's lower bound."""
    pytest.importorskip("triton")
    import triton
    from triton.backends.compiler import GPUTarget

    import ws_solver.triton as wst
    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source
    from corpus.kernels import gemm_tma
    from ws_solver import corpus_path, ir
    from ws_solver.model.cost_table import cost_table, region_warps
    from ws_solver.model.dfg import build_graph, ws_loops
    from ws_solver.pipeline.partition import resolve_target
    from ws_solver.triton.toolchain.versions import planning_version

    config = gemm_tma.CONFIGS["t128x256x64_w8_s3"]
    wst.enable("optimal", cache_dir=tmp_path)
    try:
        triton.compile(
            ast_source("gemm_tma", config),
            target=GPUTarget("cuda", 90, 32),
            options=corpus_kernels.options(config),
        )
        report = wst.last_compile_report()
    finally:
        wst.disable()
    (loop,) = report.loops
    (lowered,) = report.lowered
    version = planning_version()  # the installed Triton's dump of the same kernel
    module = ir.parse((corpus_path(version) / WIDE_GEMM.name).read_text())
    graph = build_graph(module, ws_loops(module)[0])
    table = cost_table(graph, resolve_target(module, None, version))
    for p, kept in zip(loop["partitions"][1:], lowered["warps"][1:], strict=True):
        members = [n for n, parts in enumerate(loop["plan"]["assignment"]) if p["id"] in parts]
        assert region_warps(table, members) <= kept <= p["warps"]
    assert lowered["warps"][1] < loop["partitions"][1]["warps"]

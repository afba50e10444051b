"""``enable(dump_dir=...)`` / ``WS_SOLVER_DUMP``: each compile's planner input, annotated
TTGIR, plans and report, in files the CLI takes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("triton")
from triton_util import compile_corpus_kernel  # noqa: E402

from corpus import kernels as corpus_kernels  # noqa: E402
from ws_solver.triton.dropin import environ  # noqa: E402
from ws_solver.triton.dropin.switch import check_dump_dir  # noqa: E402

pytestmark = pytest.mark.triton


def test_a_compile_dumps_what_the_cli_takes(tmp_path) -> None:
    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x256x64_w8_s3"]
    folder = tmp_path / "dump"
    compiled = compile_corpus_kernel("gemm_tma", config, "heuristic", 90, dump_dir=str(folder))
    names = sorted(p.name for p in folder.iterdir())
    stems = {n.split(".")[0] + "." + n.split(".")[1] for n in names}
    assert len(stems) == 1 and names == sorted(
        f"{next(iter(stems))}.{s}"
        for s in ("input.ttgir", "annotated.mlir", "plan.json", "report.txt")
    )
    stem = next(iter(stems))
    assert stem.startswith("gemm_tma_kernel.")
    report = compiled.metadata.ws_solver
    plans = json.loads((folder / f"{stem}.plan.json").read_text())
    assert [p["plan"] for p in plans] == [loop["plan"] for loop in report["loops"]]
    assert (folder / f"{stem}.report.txt").read_text().startswith("ws_solver: gemm_tma_kernel")
    annotated = (folder / f"{stem}.annotated.mlir").read_text()
    if any(loop["specialized"] for loop in report["loops"]):
        assert "ttg.partition" in annotated
    else:  # Triton 3.9's rules keep this loop unspecialized: its tag is taken off
        assert "tt.warp_specialize" not in annotated and "ttg.partition" not in annotated
    # The input is the planner's: ws-solver partition plans it as the drop-in did.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ws_solver",
            "partition",
            str(folder / f"{stem}.input.ttgir"),
            "--strategy",
            "heuristic",
            "--json",
            str(tmp_path / "p.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    cli = json.loads((tmp_path / "p.json").read_text())
    # The CLI and the drop-in say the same thing about the same loop (the decision check
    # kept this plan: `measured target`), or the report says what decided otherwise.
    assert [loop["ii"] for loop in cli["loops"]] == [loop["ii"] for loop in report["loops"]]
    assert [loop["reason"] for loop in cli["loops"]] == [r["reason"] for r in report["loops"]]
    assert [loop["specialized"] for loop in cli["loops"]] == [
        r["specialized"] for r in report["loops"]
    ]


def test_the_dump_folder_is_checked_where_it_is_named(tmp_path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="dump_dir"):
        check_dump_dir(str(tmp_path / "file" / "below"))
    args = environ.enable_arguments({"WS_SOLVER": "optimal", "WS_SOLVER_DUMP": str(tmp_path)})
    assert args["dump_dir"] == str(tmp_path)


def test_a_kernel_from_tritons_cache_still_has_its_report(tmp_path) -> None:
    """No compile runs for a cached binary, so no stage hook: the report comes from the
    binary's metadata, and ``last_compile_report()`` names the kernel just loaded."""
    import triton
    from triton.backends.compiler import GPUTarget

    import ws_solver.triton as wst
    from corpus.dump import ast_source

    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x128x64_w4_s4"]
    wst.enable("none", cache_dir=str(tmp_path))
    try:
        for _ in range(2):
            triton.compile(
                ast_source("gemm_tma", config),
                target=GPUTarget("cuda", 90, 32),
                options=corpus_kernels.options(config),
            )
        first, second = wst.compile_reports()
    finally:
        wst.disable()
    assert second.kernel == first.kernel and second.strategy_used == first.strategy_used
    assert second.notes[-1].startswith("served from Triton's cache")
    assert triton.knobs.compilation.listener is None

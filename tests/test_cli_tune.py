"""`ws-solver tune` without a GPU or out of a checkout (one-line errors), and its report from
a tuning report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ws_solver.cli import main
from ws_solver.cli import tune as cli_tune
from ws_solver.report import tune as render

REPO = Path(__file__).resolve().parent.parent


def test_without_a_gpu_tune_fails_with_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run(
        [sys.executable, "-m", "ws_solver", "tune", "--out", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("ws-solver: tune needs a CUDA GPU: ")
    assert proc.stderr.count("\n") == 1 and not proc.stdout
    assert not (tmp_path / "t").exists()


def test_without_a_checkout_tune_fails_with_one_line(tmp_path: Path) -> None:
    """Out of the checkout (as an installed package runs) the corpus kernels are not
    importable: one line that says where to run it, exit 2, nothing written. The package
    is this checkout's, seen through a folder that holds it alone."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "ws_solver").symlink_to(REPO / "ws_solver")
    env = dict(os.environ, PYTHONPATH=str(site), CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run(
        [sys.executable, "-m", "ws_solver", "tune", "--out", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("ws-solver: tune needs a checkout of the repository (")
    assert proc.stderr.rstrip().endswith("run `python -m ws_solver tune` from its root")
    assert proc.stderr.count("\n") == 1 and not proc.stdout
    assert not (tmp_path / "t").exists()


def test_bad_candidates_are_a_usage_error(capsys) -> None:
    assert main(["tune", "--candidates", "none,explore:x"]) == 2
    err = capsys.readouterr().err
    # the strategy grammar's own message, as enable("explore:x") gives it
    assert err.startswith("ws-solver: --candidates: 'explore:x': bad strategy 'explore:x': write")
    assert err.count("\n") == 1
    assert main(["tune", "--candidates", "top:0"]) == 2
    err = capsys.readouterr().err
    assert (
        err == "ws-solver: --candidates: bad candidates 'top:0': write top:N with N from 1 to 32\n"
    )


def outcome(name: str, status: str, binary: str | None, ms=(), same_as=None, reason="") -> dict:
    return {
        "name": name,
        "status": status,
        "binary": binary,
        "same_as": same_as,
        "strategy_used": name.split("~")[0],
        "reason": reason,
        "compile_s": 1.0,
        "ms": list(ms),
        "median_ms": sorted(ms)[len(ms) // 2] if ms else None,
    }


def tuned_report(winner: str = "heuristic") -> dict:
    return {
        "kernel": "gemm_tma_kernel",
        "key": ["BLOCK_M=128"],
        "winner": winner,
        "note": "",
        "candidates": [
            outcome("heuristic", "timed", "h", [1.0, 1.01, 0.99]),
            outcome("optimal", "duplicate", "h", same_as="heuristic"),
            outcome("none", "timed", "n", [1.2, 1.2, 1.21]),
            outcome("triton", "discarded", "t", reason="c: relative error 0.5 > 0.002"),
        ],
        "total_s": 12.5,
        "compile_s": 10.0,
        "check_s": 0.5,
        "bench_s": 2.0,
    }


def test_config_result_compares_the_winner_with_the_recheck() -> None:
    recheck = {"heuristic": [1.02, 1.0, 1.01], "none": [0.98, 0.99, 1.0]}
    row = cli_tune.config_result("gemm_tma", "c", tuned_report(), recheck, {}, {"wall_s": 3.0})
    assert row["fastest"] == "none" and row["winner_ms"] == 1.01
    assert abs(row["regret"] - (1.01 / 0.99 - 1)) < 1e-12
    assert row["vs_none"] == row["regret"] and row["vs_triton"] is None  # triton discarded
    assert row["recheck_ms"]["optimal"] == 1.01  # a duplicate shows its twin's time
    assert abs(row["winner_spread"] - 0.02 / 1.01) < 1e-12
    assert row["binaries"] == 2 and row["tuning"]["total_s"] == 12.5
    summary = cli_tune.summarize([row, {"kernel": "k", "config": "d", "error": "boom"}])
    assert summary == {
        "configs": 1,
        "failed": 1,
        "within_1pct": 0,
        "max_regret": row["regret"],
        "median_tuning_s": 12.5,
        "max_tuning_s": 12.5,
    }
    document = {
        "environment": {"device": "NVIDIA H200"},
        "candidates": ["heuristic", "optimal", "none", "triton"],
        "reference": "none~ov0~wg0",
        "rounds": 3,
        "recheck_rounds": 3,
        "jobs": 4,
        "results": [row, {"kernel": "k", "config": "d", "error": "boom"}],
        "summary": summary,
    }
    text = render.to_markdown(document)
    assert "| gemm_tma | c | 2 | `heuristic` | 1.0100 (±1.0%) | `none` 0.9900 | +2.0% " in text
    assert "| triton | 12.5 (10.0 / 0.5 / 2.0) |" in text
    assert "| k | d | - | error: boom |" in text
    assert "| `optimal` | duplicate | optimal | h | - | 1.0100 | = heuristic |" in text
    assert "within 1% of the fastest recheck in 0 of 1" in text


def test_tune_runs_the_tuner_through_the_corpus_launch(monkeypatch, tmp_path: Path) -> None:
    """The command's wiring, with the fake launcher and timer of test_autotune standing in
    for the GPU and a corpus module whose launch calls KERNEL[grid](...)."""
    import json
    import types

    from tests.test_autotune import ARGS, FakeLauncher, FakeTimer, T, double
    from ws_solver.triton.autotuning import autotuner

    launcher = FakeLauncher({"heuristic": ("h", double), "none": ("n", double)})
    timer = FakeTimer(launcher, {"heuristic": 1.0, "none": 2.0})

    def make_tuner(module, args):
        return autotuner.Autotuner(
            None,
            ARGS,
            candidates=args.candidates,
            launcher=launcher,
            timer=timer,
            cache_results=args.reuse_choices,
        )

    module = types.SimpleNamespace(
        KERNEL=None,
        CONFIGS={"c": {"BLOCK": 32, "num_warps": 4}, "other": {"BLOCK": 64}},
        make_inputs=lambda config, seed, size: {"x": T(range(size)), "out": T([0] * size)},
    )
    module.launch = lambda config, inputs: module.KERNEL[(1,)](
        inputs["x"], inputs["out"], len(inputs["x"].data), **config
    )
    kernels = types.SimpleNamespace(
        KERNEL_MODULES=("k",), load=lambda name: module, BENCH_INPUTS={"k": {"size": 4}}
    )
    cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(cli_tune, "tuner_for", make_tuner)
    monkeypatch.setattr(cli_tune, "unavailable", lambda: None)
    monkeypatch.setattr(cli_tune, "corpus_kernels", lambda: kernels)
    monkeypatch.setattr(cli_tune, "environment", lambda: {"device": "fake"})
    out = tmp_path / "out"
    argv = ["tune", "--out", str(out), "--jobs", "1", "--configs", "c", "--recheck-rounds", "2"]
    assert main([*argv, "--candidates", "heuristic,none"]) == 0
    document = json.loads((out / "tune.json").read_text())
    (row,) = document["results"]  # --configs c: not "other"
    assert row["winner"] == "heuristic" and row["fastest"] == "heuristic"
    assert row["recheck_rounds_ms"] == {"heuristic": [1.0, 1.0], "none": [2.0, 2.0]}
    assert row["regret"] == 0.0 and row["vs_none"] == -0.5
    assert row["key"] == ["BLOCK=32", "num_warps=4", "x:float32", "out:float32", "n:int"]
    assert document["summary"]["within_1pct"] == 1
    assert "| k | c | 2 | `heuristic` | 1.0000 (±0.0%) |" in (out / "tune.md").read_text()
    assert module.KERNEL is None  # the stand-in is gone

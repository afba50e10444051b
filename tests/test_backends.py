"""The local backend (ordering, progress, bounded retries, a killed worker), compare's faults
on it, an interrupted run, and the message when Ray is missing. Ray itself:
test_ray_backend.py."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from backend_helpers import (
    CORPUS,
    SMALL,
    AlwaysFails,
    KillOnce,
    Wrapped,
    cache_hits_of_a_rerun,
    compare_in,
    deterministic_json,
    interrupt_after_first_loop,
    square,
    ws_solver_process,
)

from ws_solver.backends import RAY_EXTRA, BackendError, open_backend
from ws_solver.cli import main


def test_map_keeps_order_and_reports_progress() -> None:
    seen = []
    with open_backend("local", 2) as backend:
        results = backend.map(square, range(6), progress=seen.append)
        stats = backend.stats.to_dict()
    assert [r.value for r in results] == [0, 1, 4, 9, 16, 25]
    assert [r.index for r in results] == list(range(6))
    assert sorted(r.index for r in seen) == list(range(6)) and all(r.ok for r in seen)
    assert stats["backend"] == "local" and stats["tasks"] == 6 and stats["slots"] == 2
    assert 1 <= stats["workers"] <= 2 and stats["retries"] == 0 and stats["failed"] == 0


def test_a_failing_task_is_retried_a_bounded_number_of_times() -> None:
    with open_backend("local", 1) as backend:
        results = backend.map(AlwaysFails(square, "3"), range(5), retries=3)
        stats = backend.stats.to_dict()
    failed = results[3]
    assert not failed.ok and failed.attempts == 4
    assert failed.error == "OSError: injected fault in 3"
    assert [r.value for r in results if r.ok] == [0, 1, 4, 16]  # the others are kept
    assert stats["retries"] == 3 and stats["failed"] == 1


def test_an_interrupted_map_stops_its_workers_without_waiting() -> None:
    """Ctrl-C while a task runs: the pool's workers are terminated, not waited for."""

    def interrupt(result) -> None:
        raise KeyboardInterrupt

    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), open_backend("local", 2) as backend:
        backend.map(time.sleep, [0, 60], progress=interrupt)
    assert time.perf_counter() - start < 30  # the 60-second task was not waited for


def test_unknown_backend() -> None:
    with pytest.raises(BackendError, match="unknown backend 'spark'"), open_backend("spark"):
        pass


@pytest.mark.slow
def test_killed_worker_is_retried_with_the_same_result(small: Path, reference: dict, tmp_path):
    marker = tmp_path / "killed"
    with open_backend("local", 2) as backend:
        faulty = Wrapped(backend, lambda fn: KillOnce(fn, "gemm_tma", str(marker)))
        document = compare_in(faulty, small, jobs=2).document
    assert marker.exists()  # a worker really died
    assert deterministic_json(document) == deterministic_json(reference)
    assert document["timing"]["backend"]["retries"] >= 1
    assert document["timing"]["backend"]["failed"] == 0


def test_a_loop_that_keeps_failing_is_reported_and_the_rest_kept(small: Path, reference: dict):
    with open_backend("local", 1) as backend:
        faulty = Wrapped(backend, lambda fn: AlwaysFails(fn, "gemm_tma"))
        result = compare_in(faulty, small)
    document = result.document
    assert result.exit_status == 1  # some failed, the others were done
    [failure] = document["failures"]
    assert failure["kind"] == "internal" and failure["loop"] == 0
    assert failure["message"].endswith(
        "loop 0: failed after 3 attempts: OSError: injected fault in "
        f"{small / 'gemm_tma.t128x128x64_w4_s4.sm90.ttgir'}"
    )
    kept = [r for r in reference["loops"] if "gemm_tma" not in r["file"]]
    assert document["loops"] == kept


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])  # in this process (CP-SAT must not eat SIGINT)
@pytest.mark.usefixtures("sigint_handled")  # the command must not inherit it ignored
def test_interrupted_run_leaves_no_output_and_the_cache_keeps_what_finished(
    jobs: str, small: Path, tmp_path: Path, tmp_path_factory
) -> None:
    out, cache = tmp_path / "out", tmp_path_factory.mktemp("plans")
    out.mkdir()
    argv = ["compare", str(small), "--jobs", jobs, "--time-limit", "2", "--cache"]
    process = ws_solver_process(
        *argv, "--json", str(out / "compare.json"), "--report", str(out / "r.html"), cache=cache
    )
    err = interrupt_after_first_loop(process)
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "ws-solver: interrupted"
    assert list(out.iterdir()) == []  # neither file, nor a temporary one
    assert cache_hits_of_a_rerun(argv, cache, out / "again.json") >= 1


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", str(CORPUS / SMALL[1]), "--backend", "ray"],
        ["explore", str(CORPUS / SMALL[1]), "--backend", "ray"],
    ],
)
def test_missing_ray_extra(argv, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"ws-solver: --backend ray needs Ray, an optional extra: {RAY_EXTRA}\n"
    assert RAY_EXTRA == "pip install 'ws-solver[ray]'"


def test_missing_ray_extra_in_the_sweep(monkeypatch, capsys, tmp_path: Path) -> None:
    from benchmarks.gpu import sweep_plans

    monkeypatch.setitem(sys.modules, "ray", None)
    argv = ["run", "--out", str(tmp_path / "sweep"), "--dry-run", "--backend", "ray"]
    assert sweep_plans.main([*argv, "--kernels", "gemm_tma", "--configs", "nothing"]) == 2
    assert f"--backend ray needs Ray, an optional extra: {RAY_EXTRA}" in capsys.readouterr().err


def test_ray_address_needs_the_ray_backend(capsys) -> None:
    argv = ["compare", str(CORPUS / SMALL[1]), "--ray-address", "127.0.0.1:6379"]
    assert main(argv) == 2
    assert capsys.readouterr().err == "ws-solver: --ray-address needs --backend ray\n"


def test_a_gpu_task_that_keeps_failing_marks_its_rows(tmp_path: Path) -> None:
    """The sweep's per-config GPU task, without torch (as in CI): it fails at `import torch`
    on every attempt, and its rows say so; each config is saved as it ends."""
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here: the GPU task would run")
    from benchmarks.gpu import sweep_backend

    rows = [
        {"job": f"gemm_tma.c{i}.s", "kernel": "gemm_tma", "config": f"c{i}", "strategy": "s"}
        for i in range(2)
    ]
    args = SimpleNamespace(
        bench_kernels="", kernels="gemm_tma", sustain=0, no_bench=False, rounds=1
    )
    saved = []
    with open_backend("local", 1) as backend:
        gpus = sweep_backend.verify_and_time(
            backend, rows, {}, tmp_path, args, lambda: saved.append(1), retries=1
        )
    assert gpus == [] and len(saved) == 2
    why = "GPU task failed after 2 attempt(s): ModuleNotFoundError: No module named 'torch'"
    assert [row["verify"] for row in rows] == [{"passed": False, "why": why}] * 2

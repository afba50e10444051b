"""Switching ws_solver on from the environment (ws_solver.autoload, triton.dropin.environ):
a program that never imports ws_solver (tests/autoload_child.py) compiles a warp-specialized
kernel for sm_100 on the CPU, in its own process or in a spawned worker, and the compile log
shows ws_solver planned it; with $WS_SOLVER unset, nothing of ws_solver is imported.

The children get ws_solver the way an uninstalled checkout does (``site_folder`` first on
PYTHONPATH: its sitecustomize runs the package's .pth); ``pip install`` puts the same .pth in
site-packages (setup.py; checked by hand, see docs/torch-compile.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.gpu.torch_compile_check import match_reports, ws_compiles
from ws_solver import autoload
from ws_solver.core.envvars import VARIABLE
from ws_solver.triton.dropin import reportlog

REPO = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "autoload_child.py"
KERNEL, CAPABILITY = "gemm_tma", "100"  # the optimal plan specializes it (2-3 partitions)
# Planned by ws_solver: the solver's plan, or the heuristic's where a loaded machine ran the
# solver's wall-clock limit out first (the drop-in's own tests check the plans themselves).
PLANNED = ("optimal", "heuristic")
ASLEEP = ["ws_solver", "ws_solver.autoload", "ws_solver.core", "ws_solver.core.envvars"]
FAST = {  # one solve of at most 5 s, no guard child, no decision check: seconds per compile
    "WS_SOLVER_TIME_LIMIT": "5",
    "WS_SOLVER_CHECK_DECISION": "0",
    "WS_SOLVER_LOWERING_TIMEOUT": "0",
}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return Path(autoload.site_folder(tmp_path / "site"))


def child_env(site: Path, tmp_path: Path, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WS_SOLVER")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    env["WS_SOLVER_CACHE_DIR"] = str(tmp_path / "plans")  # not the user's plan cache
    env.update(variables)
    return env


def run_child(env: dict[str, str], where: str, *code: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", *code] if code else [sys.executable, str(CHILD)]
    args = [] if code else [KERNEL, CAPABILITY, where]
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=300, cwd=REPO
    )


def output(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def compiles(log: Path) -> list[dict]:
    return [r for r in reportlog.read(log) if r["event"] == "compile"]


# -- nothing when unset -----------------------------------------------------------------------
def test_the_pth_line_uses_only_os_when_unset() -> None:
    line = Path(autoload.pth_source()).read_text()
    assert line.startswith("import os;") and line.count("\n") == 1
    code = (
        "import sys; before = set(sys.modules); meta = list(sys.meta_path); "
        f"exec(open({autoload.pth_source()!r}).read()); "
        "print(sorted(set(sys.modules) - before), sys.meta_path == meta)"
    )
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.stdout.split() == ["[]", "True"], result.stderr


@pytest.mark.triton
def test_unset_variable_imports_no_ws_solver_module(site: Path, tmp_path: Path) -> None:
    env = child_env(site, tmp_path, WS_SOLVER="", WS_SOLVER_REPORT=str(tmp_path / "log"))
    seen = output(run_child(env, "none"))
    assert seen["process"]["ws_solver_modules"] == []
    assert not (tmp_path / "log").exists()


def test_set_variable_loads_only_the_watcher_until_triton(site: Path, tmp_path: Path) -> None:
    env = child_env(site, tmp_path, WS_SOLVER="optimal")
    code = (
        "import sys, json; print(json.dumps([sorted(m for m in sys.modules "
        "if m.startswith(('ws_solver', 'triton', 'ortools'))), "
        "[type(f).__name__ for f in sys.meta_path]]))"
    )
    modules, finders = output(run_child(env, "", code))
    assert modules == ASLEEP
    assert finders[0] == "TritonWatcher"


@pytest.mark.triton
def test_a_look_up_of_triton_does_not_use_up_the_switch(site: Path, tmp_path: Path) -> None:
    """torch asks ``importlib.util.find_spec("triton")`` before importing it: the watcher
    stays for the import itself, and switches ws_solver on once."""
    log = tmp_path / "ws.jsonl"
    env = child_env(site, tmp_path, WS_SOLVER="optimal", WS_SOLVER_REPORT=str(log))
    code = (
        "import importlib.util, json, sys; importlib.util.find_spec('triton'); import triton; "
        "importlib.util.find_spec('triton'); import triton.language; "
        "print(json.dumps('ws_solver.triton.dropin.switch' in sys.modules))"
    )
    assert output(run_child(env, "", code)) is True
    assert [r["event"] for r in reportlog.read(log)] == ["enabled"]


# -- on when set ------------------------------------------------------------------------------
@pytest.mark.triton
def test_a_compile_in_the_program_is_planned_and_logged(site: Path, tmp_path: Path) -> None:
    log = tmp_path / "ws.jsonl"
    env = child_env(site, tmp_path, WS_SOLVER="optimal", WS_SOLVER_REPORT=str(log), **FAST)
    seen = output(run_child(env, "here"))
    pid = seen["process"]["pid"]
    assert "ws_solver.triton.dropin.switch" in seen["process"]["ws_solver_modules"]
    events = [(r["event"], r["pid"]) for r in reportlog.read(log)]
    assert events == [("enabled", pid), ("compile", pid)]
    (record,) = compiles(log)
    report = record["report"]
    assert record["kernel"] == "gemm_tma_kernel" and record["capability"] == 100
    assert report["strategy_asked"] == "optimal" and report["strategy_used"] in PLANNED
    assert report["loops"][0]["strategy"] in PLANNED
    # The report says what the binary is: specialized exactly when Triton lowered partitions.
    assert seen["specialized"] == bool(report["lowered"]) == report["loops"][0]["specialized"]
    assert record["hash"]  # Triton's cache key: its binaries are in ws_solver's folder
    (folder,) = (tmp_path / "triton").glob("ws_solver-optimal-*")
    assert any(folder.rglob("gemm_tma_kernel.cubin"))


@pytest.mark.triton
def test_a_compile_in_a_worker_process_is_planned_and_logged(site: Path, tmp_path: Path) -> None:
    log = tmp_path / "ws.jsonl"
    env = child_env(site, tmp_path, WS_SOLVER="optimal", WS_SOLVER_REPORT=str(log), **FAST)
    seen = output(run_child(env, "worker"))
    worker, parent = seen["process"]["pid"], seen["parent"]["pid"]
    assert worker != parent
    (record,) = compiles(log)
    assert record["pid"] == worker and record["report"]["strategy_used"] in PLANNED
    assert seen["specialized"] == bool(record["report"]["lowered"])
    enabled = [r["pid"] for r in reportlog.read(log) if r["event"] == "enabled"]
    assert enabled == [worker]  # the parent never imported Triton: ws_solver stayed asleep
    assert seen["parent"]["ws_solver_modules"] == ASLEEP
    # What benchmarks/gpu/torch_compile_check.py counts on the GPU: the WS compile in Triton's
    # cache, matched to its report by Triton's cache key.
    matched = match_reports(ws_compiles(tmp_path / "triton"), log)
    assert matched["ws_compiles"] == 1 and not matched["missing"]
    assert matched["by_pid"] == {str(worker): 1} and matched["enabled_pids"] == [worker]


@pytest.mark.triton
def test_a_bad_variable_is_one_line_and_leaves_ws_solver_off(site: Path, tmp_path: Path) -> None:
    log = tmp_path / "ws.jsonl"
    env = child_env(
        site, tmp_path, WS_SOLVER="optimal", WS_SOLVER_TIME_LIMIT="ten", WS_SOLVER_REPORT=str(log)
    )
    result = run_child(env, "here")
    seen = output(result)  # the program ran to its end: Triton's own compile
    lines = [line for line in result.stderr.splitlines() if "ws_solver" in line]
    assert lines == [
        f"ws_solver: WS_SOLVER_TIME_LIMIT='ten': not a number: 'ten'; ws_solver is off in "
        f"this process (pid {seen['process']['pid']})"
    ]
    (off,) = reportlog.read(log)
    assert off["event"] == "off" and off["variable"] == "WS_SOLVER_TIME_LIMIT"
    assert not list((tmp_path / "triton").glob("ws_solver-*"))
    matched = match_reports(ws_compiles(tmp_path / "triton"), log)
    assert matched["missing"] == [f"gemm_tma_kernel ({matched_folder(tmp_path)})"]


def matched_folder(tmp_path: Path) -> str:
    (ttir,) = (tmp_path / "triton").rglob("gemm_tma_kernel.ttir")
    return ttir.parent.name

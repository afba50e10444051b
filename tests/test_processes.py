"""The processes ws_solver starts (issue 36, items 3, 4 and 10): --jobs capped at the usable
cores, pool workers and the resource tracker gone with their parent on SIGTERM or SIGKILL,
and nothing imported from the working directory by the pool workers, the guard's helper or a
`python_command` (tune's helpers)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ws_solver.backends.local import LocalBackend, usable_cores
from ws_solver.cli.backend_options import backend_from_args
from ws_solver.core.processes import python_command

REPO = Path(__file__).resolve().parent.parent
# A module that shadows the standard library's `select` (which subprocess and multiprocessing
# import): imported, it leaves its process id in a marker file.
SHADOW = (
    "import os\n"
    "with open(os.path.join({folder!r}, 'imported'), 'a') as f:\n"
    "    f.write(f'{{os.getpid()}}\\n')\n"
    "raise ImportError('the working directory was imported from')\n"
)


def planted(folder: Path) -> Path:
    (folder / "select.py").write_text(SHADOW.format(folder=str(folder)))
    return folder / "imported"


def run_parent(code: str, cwd: Path, **kwargs) -> subprocess.Popen:
    """`code` as a script in a folder of its own, run from `cwd`, as the `ws-solver` command
    runs: its folder is first on `sys.path`, not `cwd`; this repository importable."""
    script = cwd / "bin" / "parent.py"
    script.parent.mkdir(exist_ok=True)
    body = "".join(f"    {line}\n" for line in code.strip().splitlines())
    script.write_text(f"if __name__ == '__main__':  # spawn imports it again\n{body}")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.Popen([sys.executable, str(script)], cwd=cwd, env=env, text=True, **kwargs)


def alive(pid: int) -> bool:
    """Running (a zombie, or a reused pid of another program, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# -- --jobs -----------------------------------------------------------------------------------
def test_jobs_are_capped_at_the_usable_cores(capsys) -> None:
    cores = usable_cores()
    assert LocalBackend(cores + 99_998).jobs == cores
    args = argparse.Namespace(backend="local", ray_address=None, jobs=100_000)
    with backend_from_args(args) as backend:
        assert backend.jobs == cores
    assert args.jobs == cores  # what the report records
    err = capsys.readouterr().err
    noun = "core" if cores == 1 else "cores"
    assert err == f"ws-solver: --jobs 100000: capped at the {cores} usable CPU {noun}\n"
    args = argparse.Namespace(backend="local", ray_address=None, jobs=1)
    with backend_from_args(args):
        pass
    assert capsys.readouterr().err == ""


# -- workers die with their parent ------------------------------------------------------------
POOL = """
import json, os, time
from multiprocessing import resource_tracker
from ws_solver.backends.local import LocalBackend
backend = LocalBackend(2)
handles = [backend.submit(time.sleep, 600, 1, 0) for _ in range(2)]
time.sleep(1.0)
tracker = resource_tracker._resource_tracker._pid
print(json.dumps([*backend.pool._processes, tracker]), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_and_tracker_end_with_their_parent(tmp_path: Path, sig) -> None:
    parent = run_parent(POOL, tmp_path, stdout=subprocess.PIPE)
    try:
        pids = json.loads(parent.stdout.readline())
        assert len(pids) == 3 and all(alive(p) for p in pids)
        parent.send_signal(sig)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in pids if alive(p)], "left running after their parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


# -- nothing imported from the working directory ----------------------------------------------
MAP = """
from ws_solver.backends.local import LocalBackend
backend = LocalBackend(2)
handles = [backend.submit(abs, -n, 1, 0) for n in range(4)]
done = []
while len(done) < len(handles):
    done += backend.wait([h for h in handles if h not in [d[0] for d in done]])
assert sorted(d[2][0] for d in done) == [0, 1, 2, 3], done
backend.close()
"""


def test_pool_workers_do_not_import_from_the_working_directory(tmp_path: Path) -> None:
    marker = planted(tmp_path)
    parent = run_parent(MAP, tmp_path, stderr=subprocess.PIPE)
    _, err = parent.communicate(timeout=120)
    assert parent.returncode == 0, err
    assert not marker.exists(), f"imported in processes {marker.read_text().split()}"


GUARD = """
from ws_solver.triton.guard.helper import STARTUP_TIMEOUT_S, ServerHandle
handle = ServerHandle.start()
hello = handle.hello(STARTUP_TIMEOUT_S)
handle.proc.stdin.close()
handle.proc.wait(timeout=30)
assert hello.get("ready"), hello
"""


def test_the_guard_s_helper_does_not_import_from_the_working_directory(tmp_path: Path) -> None:
    marker = planted(tmp_path)
    parent = run_parent(GUARD, tmp_path, stderr=subprocess.PIPE)
    _, err = parent.communicate(timeout=120)
    assert parent.returncode == 0, err
    assert not marker.exists(), f"imported in processes {marker.read_text().split()}"


def test_a_python_command_keeps_the_working_directory_out(tmp_path: Path) -> None:
    marker = planted(tmp_path)
    code = "import subprocess, sys, json; print(json.dumps(sys.path))"
    for command in (python_command(["x"], code=code), python_command(module="subprocess")):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert not marker.exists(), done.stderr
    done = subprocess.run(python_command(code=code), cwd=tmp_path, capture_output=True, text=True)
    path = json.loads(done.stdout)
    assert "" not in path and str(tmp_path) not in path


HELPER = """
import subprocess, time
from ws_solver.core.processes import die_with_parent, python_command
child = subprocess.Popen(
    python_command(code="import time; time.sleep(600)"), preexec_fn=die_with_parent()
)
print(child.pid, flush=True)
time.sleep(600)
"""


def test_a_helper_ends_with_its_parent(tmp_path: Path) -> None:
    """Tune's compile helpers: started with `die_with_parent`, SIGKILL of the parent ends them."""
    parent = run_parent(HELPER, tmp_path, stdout=subprocess.PIPE)
    try:
        pid = int(parent.stdout.readline())
        assert alive(pid)
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(pid), "the helper outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()

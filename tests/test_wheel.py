"""The package installs whole: the wheel `pip wheel .` builds, installed into a fresh virtual
environment, holds the bundled corpus and the autoload .pth, its `ws-solver demo` runs, and so
do the README's commands and Python blocks, from an empty folder.

The environment sees this interpreter's site-packages for the dependencies (one .pth line
each; .pth files there, the editable install's among them, are not run) and never the
checkout: the build runs on a copy, the demo from an empty folder, without PYTHONPATH.
Building needs setuptools from PyPI (pip's build isolation), as `make test`'s install does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from ws_solver.core.triton_releases import DEFAULT_TRITON
from ws_solver.triton.toolchain.versions import SUPPORTED

REPO = Path(__file__).resolve().parent.parent
# Top-level entries of the checkout the build does not read (dot folders are skipped too).
NOT_BUILT = {"benchmarks", "tests", "docs", "build", "out"}
DEMO_TIME_LIMIT = "0.1"  # deterministic seconds per loop: the path is tested, not the optima


def _ignore(folder: str, names: list[str]) -> set[str]:
    """What the copy of the checkout leaves out: caches everywhere, and at the top the
    folders the build does not read (virtual environments, git, build outputs)."""
    skipped = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if Path(folder) == REPO:
        skipped |= {n for n in names if n.startswith(".") or n in NOT_BUILT}
    return skipped


def _run(
    cmd: list, cwd: Path, timeout: float = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WS_SOLVER")}
    full.update(env or {})
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout
    )


def _checked(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"{proc.args}: rc {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtual environment with the built wheel installed (its python)."""
    base = tmp_path_factory.mktemp("wheel")
    shutil.copytree(REPO, base / "src", ignore=_ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _checked(_run([*pip, "wheel", "--no-deps", "-w", base / "dist", base / "src"], base))
    (wheel,) = (base / "dist").glob("ws_solver-*.whl")
    _checked(_run([sys.executable, "-m", "venv", "--without-pip", base / "venv"], base))
    python = base / "venv" / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(_checked(_run([python, "-c", code], base)).strip())
    ours = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site / "ws_solver_test_deps.pth").write_text("".join(f"{p}\n" for p in ours))
    _checked(_run([*pip, "--python", python, "install", "--no-deps", wheel], base))
    return python


@pytest.mark.slow
def test_the_installed_package_is_the_wheel_s(venv: Path, tmp_path: Path) -> None:
    code = (
        "import ws_solver, sysconfig; from ws_solver.cli.demo import packaged_corpus; "
        "print(ws_solver.__file__); print(sysconfig.get_path('purelib')); "
        "print(packaged_corpus())"
    )
    module, site, corpus = _checked(_run([venv, "-c", code], tmp_path)).split()
    assert Path(module).is_relative_to(site), module
    assert (Path(site) / "ws_solver_autoload.pth").is_file()
    for version in SUPPORTED.values():
        folder = Path(corpus) / version.corpus_dir
        shipped = sorted(p.name for p in folder.iterdir())
        in_repo = sorted(p.name for p in (REPO / "corpus" / version.corpus_dir).iterdir())
        assert shipped == in_repo, version.corpus_dir
        assert "index.json" in shipped and len(shipped) > 1


@pytest.mark.slow
def test_the_installed_demo_runs_on_the_bundled_corpus(venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    demo = [venv.parent / "ws-solver", "demo", "--out", out, "--time-limit", DEMO_TIME_LIMIT]
    start = time.perf_counter()
    stdout = _checked(_run([*demo, "--jobs", "2", "-q"], tmp_path))
    print(f"installed demo: {time.perf_counter() - start:.1f} s")
    assert f"report folder: {out.resolve()}" in stdout.splitlines()
    document = json.loads((out / "compare.json").read_text())
    files = {Path(loop["file"]) for loop in document["loops"]}
    bundled = {p.name for p in (REPO / "corpus").glob("ttgir*/*.ttgir")}
    assert files and {f.name for f in files} <= bundled and document["summary"]["failed"] == 0
    packaged = venv.parent.parent.resolve()  # read from the wheel's copy, not the checkout's
    assert all(f.is_relative_to(packaged) and "data/corpus" in f.as_posix() for f in files)
    # Stock's decisions come from the index.json shipped beside the dumps.
    assert all("triton" in loop["stock"] for loop in document["loops"])
    assert (out / "report.html").stat().st_size > 0


# -- the README, run from an installed wheel --------------------------------------------------
# Commands that solve get this deterministic limit appended (argparse keeps the last one): the
# commands are tested, not the optima. `demo` is left to the test above.
SOLVING = ("compare", "explore", "partition", "explain")
README_TIME_LIMIT = "0.1"


def readme_blocks(language: str) -> list[str]:
    """The README's fenced code blocks in `language`, in order."""
    blocks = re.findall(
        rf"^```{language}\n(.*?)^```", (REPO / "README.md").read_text(), re.M | re.S
    )
    assert blocks, language
    return blocks


def readme_commands() -> list[str]:
    """Every `ws-solver` command of the README's shell blocks but `demo`, as it would run here:
    a solving one with README_TIME_LIMIT appended (after any comment is cut)."""
    commands = []
    for block in readme_blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            words = line.split()
            if words[:1] != ["ws-solver"] or words[1] == "demo":
                continue
            commands.append(with_time_limit(line))
    return commands


def with_time_limit(command: str) -> str:
    """`command` with README_TIME_LIMIT appended when it solves."""
    words = command.split()
    if len(words) > 1 and words[1] in SOLVING:
        command += f" --time-limit {README_TIME_LIMIT}"
    return command


def help_commands() -> list[str]:
    """Every `ws-solver` example of the `--help` texts that runs without a GPU, a Ray cluster
    or a compile log (`demo` left to its own test), continuation lines joined and what
    follows `&&` (Graphviz) cut; solving ones with README_TIME_LIMIT appended."""
    from ws_solver.cli import COMMANDS, build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.choices and "demo" in a.choices)
    epilogs = [parser.epilog]
    epilogs += [subparsers.choices[c.__name__.rsplit(".", 1)[1]].epilog for c in COMMANDS]
    commands = []
    for epilog in epilogs:
        examples = epilog.split("examples", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
        for line in examples.splitlines()[1:]:
            command = " ".join(line.split("&&", 1)[0].split())
            words = command.split()
            if words[:1] != ["ws-solver"] or words[1] in ("demo", "reports", "tune"):
                continue
            if "--backend ray" not in command and command not in commands:
                commands.append(command)
    return [with_time_limit(c) for c in commands]


def test_the_readme_names_the_bundled_corpus_not_the_checkout_s() -> None:
    commands = readme_commands()
    assert {c.split()[1] for c in commands} >= {"corpus", "graph", "compare", "explore"}
    assert all("corpus/ttgir" not in c for c in commands), commands
    assert all("corpus.kernels" not in block for block in readme_blocks("python"))


@pytest.mark.slow
def test_the_readme_commands_run_from_an_installed_wheel(venv: Path, tmp_path: Path) -> None:
    """The README's `ws-solver` commands, in an empty folder with only the wheel installed."""
    env = {
        "PATH": f"{venv.parent}{os.pathsep}{os.environ['PATH']}",
        "WS_SOLVER_CACHE_DIR": str(tmp_path / "plan-cache"),
    }
    start = time.perf_counter()
    for command in readme_commands():
        proc = _run(["bash", "-c", command], tmp_path, env=env)
        assert proc.returncode == 0, f"{command}: rc {proc.returncode}\n{proc.stderr[-3000:]}"
        assert proc.stdout or not proc.stderr.strip(), command
    print(f"README commands, installed: {time.perf_counter() - start:.1f} s")
    corpus = _checked(_run([venv.parent / "ws-solver", "corpus"], tmp_path)).strip()
    assert Path(corpus).is_relative_to(venv.parent.parent.resolve()), corpus
    for written in ("compare.html", "compare.json", "plans.json"):
        assert (tmp_path / written).stat().st_size > 0, written
    assert json.loads((tmp_path / "compare.json").read_text())["summary"]["failed"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(readme_blocks("python"))))
def test_the_readme_python_runs_from_an_installed_wheel(
    venv: Path, tmp_path: Path, index: int
) -> None:
    """Each Python block of the README, as written, in an empty folder: it needs neither a
    checkout (corpus.kernels) nor a GPU (the drop-in's block compiles for sm_90 on the CPU)."""
    code = readme_blocks("python")[index]
    if "import triton" in code:
        pytest.importorskip("triton")
    script = tmp_path / "readme.py"  # @triton.jit reads its source from a file
    script.write_text(code)
    start = time.perf_counter()
    stdout = _checked(_run([venv, script.name], tmp_path))
    print(f"README Python block {index}, installed: {time.perf_counter() - start:.1f} s")
    lines = stdout.splitlines()
    assert lines and all(line.split()[0] in ("matmul", "attention_fwd_kernel") for line in lines)


def test_the_extras_pin_the_documented_releases() -> None:
    """`[triton]` gives the default release the docs assume, `[triton39]` the other one, and
    the Makefile's two environments install through them."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert extras["triton"] == [f"triton=={DEFAULT_TRITON}"]
    others = [v for v in SUPPORTED if v != DEFAULT_TRITON]
    assert [extras[f"triton{v.replace('.', '')[:2]}"] for v in others] == [
        [f"triton=={v}"] for v in others
    ]
    makefile = (REPO / "Makefile").read_text()
    assert "install -e '.[triton,test,ray]'" in makefile
    assert "install -e '.[triton39,test,ray]'" in makefile
    readme = (REPO / "README.md").read_text()
    assert f"`[triton]` pins Triton {DEFAULT_TRITON}" in readme


def test_the_help_examples_name_the_bundled_corpus() -> None:
    commands = help_commands()
    assert len(commands) >= 10 and all("corpus/ttgir" not in c for c in commands), commands
    assert all(c.split()[1] != "graph" or "$(ws-solver corpus)" in c for c in commands)


@pytest.mark.slow
def test_the_help_examples_run_from_an_installed_wheel(venv: Path, tmp_path: Path) -> None:
    """Every `--help` example that needs no GPU, cluster or log, in an empty folder with only
    the wheel installed."""
    env = {
        "PATH": f"{venv.parent}{os.pathsep}{os.environ['PATH']}",
        "WS_SOLVER_CACHE_DIR": str(tmp_path / "plan-cache"),
    }
    start = time.perf_counter()
    for command in help_commands():
        proc = _run(["bash", "-c", command], tmp_path, env=env)
        assert proc.returncode == 0, f"{command}: rc {proc.returncode}\n{proc.stderr[-3000:]}"
    print(f"--help examples, installed: {time.perf_counter() - start:.1f} s")
    for written in ("out.ttgir", "report.json", "plans.json", "plan.svg", "plan.dot"):
        assert (tmp_path / written).stat().st_size > 0, written
    assert list(tmp_path.glob("attention_fwd.*.explore-0.ttgir"))  # --out-dir .

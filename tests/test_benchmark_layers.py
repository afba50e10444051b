"""The benchmarks' folders are layers (benchmarks/__init__.py): each module imports only from
its own folder or the ones below, imports inside functions included; the root holds only the
package's __init__; nothing under benchmarks/results/ is code (the scripts of a run are in
benchmarks/recorded/)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
# Bottom to top. `recorded` holds plain scripts (no package), run as files.
LAYERS = ("common", "cpu", "analysis", "gpu", "recorded")
CODE = (".py", ".sh")


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute benchmarks import; `from X import name` counts as X.name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m.startswith("benchmarks.")]


def rank(parts: tuple[str, ...]) -> int | None:
    """A module's layer, from its path or dotted name below benchmarks; None when it is none."""
    return LAYERS.index(parts[0]) if parts and parts[0] in LAYERS else None


def sources() -> list[Path]:
    return sorted(p for p in BENCHMARKS.rglob("*.py") if "results" not in p.parts)


def test_every_folder_is_a_layer_and_the_root_holds_only_the_package() -> None:
    folders = {p.name for p in BENCHMARKS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {*LAYERS, "results"}
    assert [p.name for p in BENCHMARKS.iterdir() if p.is_file()] == ["__init__.py"]
    packages = {p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(LAYERS) - {"recorded"}


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_no_upward_or_sideways_import(path: Path) -> None:
    own = rank(path.relative_to(BENCHMARKS).parts)
    if own is None:  # the package's own __init__
        return
    wrong = [
        f"line {line}: {target}"
        for line, target in imported(path)
        if (theirs := rank(tuple(target.split(".")[1:]))) is None or theirs > own
    ]
    assert not wrong, f"{path.relative_to(REPO)} imports above its layer: {wrong}"


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    upward = tmp_path / "x.py"
    upward.write_text("def f():\n    from benchmarks.gpu import bench_gpu\n")
    [(line, target)] = imported(upward)
    assert line == 2 and rank(tuple(target.split(".")[1:])) > rank(("analysis",))
    assert rank(("common",)) < rank(("cpu",)) < rank(("analysis",)) < rank(("gpu",))


def test_no_code_under_results() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "benchmarks/results"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked, "git sees no file under benchmarks/results"
    code = [f for f in tracked if f.endswith(CODE)]
    assert not code, f"code under benchmarks/results (move it to benchmarks/recorded/): {code}"

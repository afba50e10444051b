"""The package's folders are its layers (docs/architecture.md): each module imports only from
its own layer or the ones below, imports under ``TYPE_CHECKING`` and inside functions
included; the package root holds only ``__init__``, ``__main__`` and one entry module; no
source file is over 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ws_solver"
# Bottom to top. A layer may import from itself and from the layers before it.
LAYERS = (
    "core",
    "backends",
    "ir",
    "model",
    "heuristic",
    "encode",
    "pipeline",
    "triton",
    "research",
    "report",
    "cli",
)
# The floors of `triton`, bottom to top; its __init__ (the drop-in's public names) is on top.
TRITON_FLOORS = ("toolchain", "rewrites", "guard", "dropin", "autotuning")
ROOT_MODULES = {"__init__.py", "__main__.py", "autoload.py"}  # autoload: the .pth's entry
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ws_solver import in a file, relative ones resolved; a
    ``from X import name`` counts as X.name (a submodule or a name in X)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m.startswith("ws_solver.")]


def rank(module: str) -> tuple[int, int] | None:
    """A module's place: (layer, floor within triton); None for the package root's modules."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return None
    layer = LAYERS.index(parts[1])
    if parts[1] != "triton":
        return (layer, 0)
    floor = parts[2] if len(parts) > 2 else None
    return (layer, TRITON_FLOORS.index(floor) if floor in TRITON_FLOORS else len(TRITON_FLOORS))


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_package_folder_is_a_layer() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(LAYERS) | {"data"}, folders - set(LAYERS)
    triton = {p.name for p in (PACKAGE / "triton").iterdir() if (p / "__init__.py").exists()}
    assert triton == set(TRITON_FLOORS)


def test_package_root_holds_only_entry_modules() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == ROOT_MODULES


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_upward_or_sideways_import(path: Path) -> None:
    own = rank(module_name(path))
    if own is None:  # the root's entry modules sit above every layer
        return
    wrong = []
    for line, target in imported(path):
        if target.count(".") == 1 and target.split(".")[1] not in LAYERS:
            continue  # a name of the root package (`__version__`, the lazy `explore`)
        theirs = rank(target)
        if theirs is None or theirs > own:
            wrong.append(f"line {line}: {target}")
    assert not wrong, f"{path.relative_to(REPO)} imports above its layer: {wrong}"


def test_the_checks_see_an_upward_import() -> None:
    assert rank("ws_solver.model.plan") < rank("ws_solver.pipeline.partition")
    assert rank("ws_solver.triton.guard.client") < rank("ws_solver.triton.dropin.switch")
    assert rank("ws_solver.triton.dropin.switch") < rank("ws_solver.triton.enable")
    assert rank("ws_solver.cli.common") > rank("ws_solver.report.compare")


def test_no_source_file_over_the_limit() -> None:
    folders = ("ws_solver", "benchmarks", "corpus", "tests")
    long = [
        f"{p.relative_to(REPO)}: {n}"
        for folder in folders
        for p in sorted((REPO / folder).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, long

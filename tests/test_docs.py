"""The README is a front door and its links hold: at most 250 lines, the quick start's two
commands (`.ci/run` runs its test command), every relative link of the README and of docs/
to a file that exists (and, from the pages that were the README's, to a heading there where
it names one), and every docs/ page that a `--help` names is there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ws_solver.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
# The pages moved out of the README, whose headings its old links now point at: their
# anchors are checked too (elsewhere only that the file is there).
FROM_README = {
    "README.md",
    "cli.md",
    "json-schemas.md",
    "architecture.md",
    "results.md",
    "python.md",
}
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def links(page: Path) -> list[str]:
    return [t for t in LINK.findall(FENCE.sub("", page.read_text())) if "://" not in t]


def test_the_readme_is_short_and_keeps_the_two_commands() -> None:
    text = README.read_text()
    assert text.count("\n") <= 250
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "```sh\nmake demo\nmake test\n```" in quick
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        checked = anchor and where.suffix == ".md" and page.name in FROM_README
        if not where.exists() or (checked and anchor not in anchors(where)):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


def test_the_docs_a_help_names_exist() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.choices and "demo" in a.choices)
    texts = [parser.format_help()]
    texts += [subparsers.choices[c.__name__.rsplit(".", 1)[1]].format_help() for c in COMMANDS]
    named = {m for text in texts for m in re.findall(r"docs/[\w.-]+\.md", text)}
    assert "docs/json-schemas.md" in named and "docs/cli.md" in named
    assert all((REPO / name).is_file() for name in named), named


def test_the_architecture_page_names_every_module() -> None:
    """docs/architecture.md's list names each module by its path inside its layer folder."""
    page = (REPO / "docs" / "architecture.md").read_text()
    package = REPO / "ws_solver"
    unnamed = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        inside = path.relative_to(package)
        name = inside.name if len(inside.parts) == 1 else str(Path(*inside.parts[1:]))
        if f"`{name}`" not in page:
            unnamed.append(str(inside))
    assert not unnamed, unnamed


def test_the_environment_table_gives_the_code_s_defaults() -> None:
    """docs/torch-compile.md's defaults of WS_SOLVER_TIME_LIMIT, _WORKERS and _SEED are the
    ones `enable()` uses."""
    from ws_solver.core.options import DEFAULT_SEED, DEFAULT_TIME_LIMIT, DEFAULT_WORKERS

    page = (REPO / "docs" / "torch-compile.md").read_text()
    rows = dict(re.findall(r"^\| `(WS_SOLVER_\w+)` \|[^|]*\|[^|]*\((\w+)\) \|$", page, re.M))
    assert rows["WS_SOLVER_WORKERS"] == str(DEFAULT_WORKERS)
    assert rows["WS_SOLVER_TIME_LIMIT"] == f"{DEFAULT_TIME_LIMIT:g}"
    assert rows["WS_SOLVER_SEED"] == str(DEFAULT_SEED)

"""Mutation check: each listed mutation applied to a copy of the tree, the tests named for it
run there; a mutation is caught when they fail, survived when they pass.

    python benchmarks/recorded/2026-12-07-mutations/mutations.py [--only NAME] [--list]

Run from the repository root with the project's Python. The copy is the working tree's
files (tracked, and untracked ones git does not ignore) in a temporary folder, removed after;
the tests run there with that folder first on PYTHONPATH, so the mutation is what they
import. The unmutated copy runs the same tests first: a mutation counts only when they pass
without it. Exit status 1 when a mutation survived (or a baseline failed), else 0.

To add a mutation: a `Mutation(name, file, old, new, tests)` in MUTATIONS, where `old` occurs
exactly once in `file` and `tests` are pytest arguments (files, -k, -m) that should catch it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # relative to the repository root
    old: str  # occurs exactly once in `file`
    new: str
    tests: tuple[str, ...]  # pytest arguments


MUTATIONS = (
    # Issue 50, item 9a: one mbarrier per channel stage instead of two (a full and an empty
    # one). It survived all 774 tests; tests/test_mbarrier_cap.py was written for it.
    Mutation(
        "mbarrier cap: 1 per stage",
        "ws_solver/encode/constraints.py",
        "enc.model.add(2 * stages <= enc.target.max_mbarriers)",
        "enc.model.add(stages <= enc.target.max_mbarriers)",
        ("tests/test_mbarrier_cap.py", "tests/test_target.py"),
    ),
    # Issue 50, item 9: `optimal` always falling back (to `heuristic`) in the drop-in. The
    # 72-compile matrix passed it when it only checked that the strategy used was among the
    # allowed fallbacks.
    Mutation(
        "drop-in: optimal always falls back",
        "ws_solver/triton/dropin/kernel_compile.py",
        "                chosen = self._choose(strategy, part_text, len(sites))\n",
        '                assert strategy != "optimal", "mutant"\n'
        "                chosen = self._choose(strategy, part_text, len(sites))\n",
        ("tests/test_dropin.py", "-k", "corpus_kernel_compiles"),
    ),
    # Issue 50, item 9b: the same-decision guard on Triton's partition in settle() dropped
    # (189 tests passed it); test_tritons_partition_of_the_other_decision_is_not_taken.
    Mutation(
        "decision check: Triton's partition of the other decision taken",
        "ws_solver/triton/dropin/decision_check.py",
        "if theirs_built.specialized == chosen_built.specialized and better(",
        "if better(",
        ("tests/test_decision_check.py",),
    ),
    # Issue 48: stock's kernel never kept by the spill check.
    Mutation(
        "decision check: stock's kernel not a candidate of the spill check",
        "ws_solver/triton/dropin/decision_check.py",
        "if relieves(chosen_built, stock_built) and not _spills_less(alt_built, stock_built):",
        "if False:",
        ("tests/test_decision_check.py",),
    ),
)


def tree_files(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return [f for f in out.stdout.decode().split("\0") if f and (root / f).is_file()]


def copy_tree(root: Path, files: list[str], into: Path) -> None:
    for name in files:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)


def run_tests(tree: Path, tests: tuple[str, ...]) -> tuple[int, float, str]:
    """pytest `tests` in `tree`: its exit status, seconds and the failing test (else the
    last line)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("WS_SOLVER_DEBUG", None)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *tests, "-q", "-x", "-p", "no:cacheprovider"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    return result.returncode, time.perf_counter() - start, (failed or lines or [""])[-1]


def apply(tree: Path, mutation: Mutation) -> None:
    path = tree / mutation.file
    text = path.read_text()
    count = text.count(mutation.old)
    if count != 1:
        raise SystemExit(f"{mutation.name}: {mutation.file} holds its text {count} times, not once")
    path.write_text(text.replace(mutation.old, mutation.new))


def check(mutation: Mutation, files: list[str]) -> str:
    """'caught', 'survived', or why it could not be judged; one line printed per run."""
    with tempfile.TemporaryDirectory(prefix="ws-mutation-") as folder:
        tree = Path(folder)
        copy_tree(ROOT, files, tree)
        status, seconds, last = run_tests(tree, mutation.tests)
        print(f"  baseline: exit {status} in {seconds:.0f} s: {last}", flush=True)
        if status != 0:
            return "baseline fails"
        apply(tree, mutation)
        status, seconds, last = run_tests(tree, mutation.tests)
        print(f"  mutated:  exit {status} in {seconds:.0f} s: {last}", flush=True)
    if status == 0:
        return "survived"
    return "caught" if status == 1 else f"error (pytest exit {status})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", metavar="NAME", help="only mutations whose name holds NAME")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or args.only in m.name]
    if args.list or not chosen:
        for m in MUTATIONS:
            print(f"{m.name}: {m.file}: {m.old!r} -> {m.new!r}; tests {' '.join(m.tests)}")
        return 0 if chosen or args.list else 2
    files = tree_files(ROOT)
    verdicts = {}
    for mutation in chosen:
        print(f"{mutation.name} ({mutation.file}; {' '.join(mutation.tests)})", flush=True)
        verdicts[mutation.name] = check(mutation, files)
        print(f"  -> {verdicts[mutation.name]}", flush=True)
    caught = sum(v == "caught" for v in verdicts.values())
    print(f"{caught} of {len(verdicts)} mutation(s) caught")
    return 0 if caught == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())

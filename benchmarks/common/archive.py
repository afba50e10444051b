"""The results archive: ``benchmarks/results/<YYYY-MM-DD>-<short-name>/``, one folder per run.

Each run folder holds what the run wrote (``results.md`` / ``results.json`` for the bench
and solver runs; inputs, patches and logs for experiments) and a ``manifest.json``:

    {"date": "YYYY-MM-DD", "revision": "git revision measured", "what": "what was run",
     "command": "how it was run", "files": ["results.md", ...]}

No code: the scripts an experiment ran are kept in ``benchmarks/recorded/<run folder>/``.

``files`` are paths relative to the run folder, every file of the run (a result that tests
read lives in ``tests/data/`` and is listed by its relative path there). The index,
``benchmarks/results/README.md``, has one line per run folder saying what it showed.

    python -m benchmarks.common.archive DIR --what TEXT --command TEXT [--revision R] [--date D]
    python -m benchmarks.common.archive --check   # every run has a manifest and an index line
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
INDEX = RESULTS / "README.md"
MANIFEST = "manifest.json"
KEYS = ("date", "revision", "what", "command", "files")
RUN_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-[a-z0-9][a-z0-9-]*$")


def run_files(folder: Path) -> list[str]:
    """Every file under a run folder except its manifest, relative and sorted."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != MANIFEST
    )


def git_revision() -> str:
    """The measured revision: WS_SOLVER_REVISION (a tree copied without .git), else git's."""
    if os.environ.get("WS_SOLVER_REVISION"):
        return os.environ["WS_SOLVER_REVISION"]
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def write_manifest(
    folder: Path,
    what: str,
    command: str,
    revision: str | None = None,
    date: str | None = None,
    extra_files: tuple[str, ...] = (),
) -> dict:
    """Write ``folder/manifest.json`` listing the folder's files (plus `extra_files`)."""
    manifest = {
        "date": date or datetime.date.today().isoformat(),
        "revision": revision or git_revision(),
        "what": what,
        "command": command,
        "files": sorted({*run_files(folder), *extra_files}),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def runs(results: Path = RESULTS) -> list[Path]:
    """The run folders of the archive, by name."""
    return sorted(p for p in results.iterdir() if p.is_dir())


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / MANIFEST).read_text())


def listed_files(folder: Path) -> list[Path]:
    """The files a run's manifest lists, as paths (those in tests/data resolved there)."""
    return [(folder / f).resolve() for f in manifest_of(folder)["files"]]


def problems(results: Path = RESULTS) -> list[str]:
    """What is wrong with the archive: a folder without a well-formed manifest, a listed file
    that is missing, a file not listed, a run the index does not name, an index line for a
    folder that is not there."""
    found: list[str] = []
    index = (results / "README.md").read_text() if (results / "README.md").exists() else ""
    named = set(re.findall(r"\[`?(\d{4}-\d{2}-\d{2}-[a-z0-9-]+)`?\]", index))
    names = set()
    for folder in runs(results):
        names.add(folder.name)
        where = folder.name
        if not RUN_NAME.match(folder.name):
            found.append(f"{where}: not named YYYY-MM-DD-short-name")
        try:
            manifest = manifest_of(folder)
        except (OSError, ValueError) as e:
            found.append(f"{where}: no readable {MANIFEST} ({e})")
            continue
        if sorted(manifest) != sorted(KEYS):
            found.append(f"{where}: manifest keys {sorted(manifest)}, want {sorted(KEYS)}")
            continue
        if not folder.name.startswith(manifest["date"]):
            found.append(f"{where}: manifest date {manifest['date']}")
        listed = set(manifest["files"])
        for f in sorted(listed):
            if not (folder / f).is_file():
                found.append(f"{where}: {f} is listed but missing")
        for f in run_files(folder):
            if f not in listed:
                found.append(f"{where}: {f} is not listed in {MANIFEST}")
        if folder.name not in named:
            found.append(f"{where}: no line in the index (README.md)")
    for name in sorted(named - names):
        found.append(f"README.md names {name}, which is not a run folder")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="the run folder to describe")
    parser.add_argument("--what", help="what was run (one line)")
    parser.add_argument("--command", help="the command line that ran it")
    parser.add_argument("--revision", help="git revision measured (default: HEAD)")
    parser.add_argument("--date", help="YYYY-MM-DD (default: today)")
    parser.add_argument("--check", action="store_true", help="check the whole archive")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for line in found:
            print(line, file=sys.stderr)
        return 1 if found else 0
    if args.folder is None or not args.what or not args.command:
        parser.error("FOLDER, --what and --command are needed (or --check)")
    if not args.folder.is_dir():
        parser.error(f"{args.folder}: not a folder")
    write_manifest(args.folder, args.what, args.command, args.revision, args.date)
    print(f"wrote {args.folder / MANIFEST}; add its line to {INDEX.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The results archive (benchmarks/results): one folder per run with a manifest, and an index."""

from __future__ import annotations

import json

from benchmarks.common import archive


def test_every_run_has_a_manifest_and_a_line_in_the_index() -> None:
    assert archive.problems() == []


def test_a_new_run_folder_gets_a_manifest(tmp_path) -> None:
    run = tmp_path / "2026-12-01-demo"
    (run / "runs").mkdir(parents=True)
    (run / "results.md").write_text("# demo\n")
    (run / "runs" / "log.txt").write_text("log\n")
    manifest = archive.write_manifest(
        run, "a demo", "python -m benchmarks.x", "abc1234", "2026-12-01"
    )
    assert manifest["files"] == ["results.md", "runs/log.txt"]
    assert json.loads((run / "manifest.json").read_text()) == manifest
    assert archive.problems(tmp_path) == ["2026-12-01-demo: no line in the index (README.md)"]
    (tmp_path / "README.md").write_text("- [`2026-12-01-demo`](2026-12-01-demo/): it showed x.\n")
    assert archive.problems(tmp_path) == []
    (run / "late.log").write_text("")
    (run / "results.md").unlink()
    assert archive.problems(tmp_path) == [
        "2026-12-01-demo: results.md is listed but missing",
        "2026-12-01-demo: late.log is not listed in manifest.json",
    ]

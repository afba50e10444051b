"""benchmarks/against_stock.py: issue 22's measure, stock's time over ws_solver's (CPU only)."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks import against_stock as ag


def _row(config: str, strategy: str, ms: float, binary: str, passed: bool = True) -> dict:
    return {
        "kernel": "k",
        "config": config,
        "strategy": strategy,
        "compile": {"binary": binary},
        "verify": {"passed": passed},
        "bench": {"ms": ms},
    }


RESULTS = [
    _row("a", "builtin", 2.0, "s-a"),
    _row("a", "optimal", 1.6, "o-a"),  # 1.25
    _row("b", "builtin", 1.0, "same"),
    _row("b", "optimal", 1.0, "same"),  # stock's own cubin: 1
    _row("c", "builtin", 1.0, "s-c"),
    _row("c", "optimal", 0.5, "o-c", passed=False),  # not verified: left out
    _row("d", "optimal", 1.0, "o-d"),  # stock did not compile d: nothing to compare
]


def _ok(row: dict) -> bool:
    return row["verify"]["passed"]


def test_ratio_per_config_both_verified_and_timed() -> None:
    found = ag.against_stock(RESULTS, _ok)
    assert [(c.config, c.ratio, c.same_binary) for c in found.configs] == [
        ("a", 1.25, False),
        ("b", 1.0, True),
    ]
    assert found.geomean == pytest.approx(math.sqrt(1.25))
    assert found.geomean_differing == pytest.approx(1.25)
    assert found.slowest is not None and found.slowest.config == "b"


def test_summary_and_section_name_the_strategy() -> None:
    line = ag.summary_line(ag.against_stock(RESULTS, _ok))
    assert "geomean **1.1180** over 2 configs" in line and "1.2500 over the 1" in line
    assert ag.summary_line(ag.against_stock(RESULTS, _ok, "heuristic")).endswith("beside stock")
    section = ag.markdown_section(RESULTS, _ok)
    assert section[1].startswith("## Against stock Triton") and len(section) == 4
    assert ag.markdown_section([r for r in RESULTS if r["strategy"] != "builtin"], _ok) == []
    undigested = [{**r, "compile": {}} for r in RESULTS]
    assert "cubin digests not recorded" in ag.summary_line(ag.against_stock(undigested, _ok))


def test_command_line_reads_runs_and_refuses_a_bad_file(tmp_path, capsys) -> None:
    runs = []
    for k, ms in enumerate((1.6, 1.5)):
        path = tmp_path / f"r{k}.json"
        rows = [
            {**_row("a", "builtin", 2.0, "s"), "job": "k.a.builtin"},
            {**_row("a", "optimal", ms, "o"), "job": "k.a.optimal"},
        ]
        path.write_text(json.dumps({"results": rows}))
        runs.append(str(path))
    assert ag.main(runs) == 0
    out = capsys.readouterr().out
    assert "2 runs: 1.2500-1.3333, median 1.2917" in out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert ag.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err

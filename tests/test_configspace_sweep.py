"""benchmarks/analysis/configspace_sweep.py's report on small synthetic runs: the autotune
column and its targets, each strategy against the stock of its own run (CPU only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.analysis import configspace_sweep as sweep


def _row(config: str, strategy: str, rounds: list[float] | None, binary: str = "", **comp) -> dict:
    row = {
        "kernel": "gemm_tma",
        "config": config,
        "strategy": strategy,
        "compile": {"binary": binary or f"{strategy}-{config}", **comp},
        "verify": {"passed": rounds is not None},
    }
    if rounds is not None:
        row["bench"] = {"ms_rounds": rounds}
    return row


def _tuned(config: str, rounds: list[float], winner: str, binary: str = "", **comp) -> dict:
    return _row(config, "autotune", rounds, binary, winner=winner, tuned=True, **comp)


def _autotune_run() -> list[dict]:
    """Stock and autotune in the same rounds: faster (a), stock's own cubin (b), where stock
    does not compile (c), 5% slower with the rounds apart (d), tuning failed (e)."""
    stock_fails = _row("c", "builtin", None)
    stock_fails["compile"]["error"] = "ptxas: out of registers"
    failed = _row("e", "autotune", None)
    failed["compile"]["error"] = "tuning: RuntimeError: boom"
    return [
        _row("a", "builtin", [2.0, 2.0, 2.0]),
        _tuned("a", [1.0, 1.0, 1.0], "heuristic", warp_specialize_ops=1),
        _row("b", "builtin", [1.5, 1.5, 1.5], binary="same"),
        _tuned("b", [1.5, 1.5, 1.5], "none", binary="same"),
        stock_fails,
        _tuned("c", [1.0, 1.0, 1.0], "optimal"),
        _row("d", "builtin", [1.0, 1.0, 1.01]),
        _tuned("d", [1.05, 1.05, 1.06], "explore:1"),
        _row("e", "builtin", [1.0, 1.0, 1.0]),
        failed,
    ]


def test_autotune_targets_over_all_configs_and_over_distinct_binaries() -> None:
    rows = sweep.rows_of(_autotune_run())
    by = {r.config: r for r in rows}
    assert by["b"].same_binary("autotune") and not by["a"].same_binary("autotune")
    lines = sweep.autotune_summary(rows)
    text = "\n".join(lines)
    assert "autotune record: 5; timed against stock in the same rounds: 3, 2 of them" in text
    assert "stock failed to compile where autotune compiled and verified: 1" in text
    # all: 2.0, 1.0, 1/1.05 -> (2/1.05)^(1/3); distinct (a, d): (2/1.05)^(1/2)
    assert f"over all timed (3): {(2 / 1.05) ** (1 / 3):.3f}" in text
    assert f"over distinct binaries (2): {(2 / 1.05) ** 0.5:.3f}" in text
    assert text.count("beyond the rounds' spread: 1 (target 0), by the medians: 1") == 2
    assert "slower than stock: gemm_tma.d 0.952 (explore:1; beyond the rounds' spread)" in text
    assert "autotune failed: gemm_tma.e: compile: tuning: RuntimeError: boom" in text
    winners = next(line for line in lines if line.startswith("- winners: "))
    assert winners == "- winners: heuristic 1, none 1, optimal 1, explore:1 1"


def test_a_strategy_is_compared_with_the_stock_of_its_own_run() -> None:
    """Optimal from a first run, autotune and stock again from a second: each ratio takes the
    stock timed in its own rounds, not the latest record's."""
    first = [_row("a", "builtin", [3.0]), _row("a", "optimal", [1.5])]
    second = [_row("a", "builtin", [2.0]), _tuned("a", [1.0], "heuristic")]
    (row,) = sweep.rows_of(first + second, [0, 0, 1, 1])
    assert row.ratio("optimal") == pytest.approx(2.0)  # 3.0 / 1.5, its own run
    assert row.ratio("autotune") == pytest.approx(2.0)  # 2.0 / 1.0
    assert row.timed["builtin"].ms == 2.0  # the table shows the latest
    (one_run,) = sweep.rows_of(first + second)  # one run: the latest stock for all
    assert one_run.ratio("optimal") == pytest.approx(2.0 / 1.5)


def test_not_tuned_launches_are_counted_with_their_reason() -> None:
    records = [
        {"winner": "heuristic", "tuned": True},
        {"winner": "optimal", "tuned": False, "note": "reference none~ov0~wg0: boom"},
        {"winner": "heuristic", "tuned": True},
    ]
    text = sweep.winners(records)
    assert text == "heuristic 2; not tuned 1 (e.g. reference none~ov0~wg0: boom)"
    assert sweep.winners([]) == "none tuned"


def test_report_adds_the_autotune_column_only_when_there_is_one(tmp_path: Path, capsys) -> None:
    run = tmp_path / "results.json"
    run.write_text(json.dumps({"environment": {}, "results": _autotune_run()}))
    out = tmp_path / "report.md"
    assert sweep.main(["report", str(run), "--out", str(out)]) == 0
    text = out.read_text()
    assert capsys.readouterr().out == text
    assert "## autotune" in text and "optimal vs stock" not in text  # no optimal in the run
    head = next(line for line in text.splitlines() if line.startswith("| config |"))
    assert head.endswith("| rule | autotune | at/stock | winner |")
    assert "| gemm_tma.b | 1.500 |" in text and "| 1.500 | 1.000 (= stock) | none |" in text
    assert "| gemm_tma.e | 1.000 |" in text and "| fail | - | - |" in text
    plain = [r for r in _autotune_run() if r["strategy"] == "builtin"]
    plain += [_row("a", "optimal", [1.0])]
    run.write_text(json.dumps({"environment": {}, "results": plain}))
    sweep.main(["report", str(run), "--out", str(out)])
    text = out.read_text()
    assert "## autotune" not in text and "optimal vs stock, geomean: 2.000" in text
    assert next(x for x in text.splitlines() if x.startswith("| config |")).endswith("| rule |")

"""benchmarks.cpu.compile_time's arithmetic (no compile)."""

from benchmarks.cpu.compile_time import percentile, ratios, summary


def _row(config: str, strategy: str, seconds: float, ok: bool = True) -> dict:
    return {"config": config, "strategy": strategy, "compile_s": seconds, "ok": ok}


def test_ratios_pair_each_config_and_skip_what_did_not_compile() -> None:
    rows = [
        _row("a", "builtin", 1.0),
        _row("a", "optimal", 1.5),
        _row("b", "builtin", 2.0),
        _row("b", "optimal", 2.0),
        _row("c", "builtin", 0.5, ok=False),  # stock fails: no ratio
        _row("c", "optimal", 3.0),
    ]
    assert sorted(ratios(rows)) == [1.0, 1.5]
    assert summary(rows).startswith("n = 2: optimal / builtin median 1.25x")


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 90) == 9.0
    assert percentile(values, 50) == 5.0
    assert percentile([3.0], 90) == 3.0

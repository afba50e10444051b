"""benchmarks/gpu/bench_measured.py on the CPU: the configurations chosen before timing
(measured_space), the --part chunks, the dry --list, and the summary's targets on synthetic
rows (measured_summary), with decision records the drop-in's own check writes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from benchmarks.gpu import bench_measured, measured_space, measured_summary
from corpus import configspace
from ws_solver.model.target import SM90
from ws_solver.triton.dropin.decision_check import Built, Candidate, settle
from ws_solver.triton.toolchain.binary_usage import BinaryUsage

GEMMS = [f for f in configspace.FAMILIES if f not in configspace.ATTENTION]


@pytest.fixture(scope="module")
def chosen() -> list[dict]:
    return measured_space.select(measured_space.index_configs())


# -- the selection ---------------------------------------------------------------------------
def test_the_selection_covers_every_family_with_at_least_150(chosen: list[dict]) -> None:
    counts = measured_space.counts(chosen)
    assert len(chosen) >= 150
    assert list(counts) == list(configspace.FAMILIES)
    assert all(12 <= n <= 16 for n in counts.values()), counts


def test_every_chosen_config_is_in_the_index_and_fits_sm90(chosen: list[dict]) -> None:
    index = {(c["family"], c["name"]): c for c in measured_space.index_configs()}
    assert len({(r["family"], r["name"]) for r in chosen}) == len(chosen)
    for row in chosen:
        assert index[(row["family"], row["name"])] == row
        assert configspace.fits(row["family"], row["config"])
        assert configspace.smem_estimate(row["family"], row["config"]) <= configspace.SMEM_LIMIT


def test_each_gemm_family_has_issue_48s_tiles(chosen: list[dict]) -> None:
    for family in GEMMS:
        mine = [r for r in chosen if r["family"] == family]
        classes = measured_space.class_counts(mine)
        assert all(n >= measured_space.MIN_PER_CLASS for n in classes.values()), (family, classes)


def test_the_selection_is_deterministic_and_committed(chosen: list[dict]) -> None:
    assert measured_space.select(measured_space.index_configs()) == chosen
    committed = json.loads(measured_space.SPACE_FILE.read_text())
    assert committed["configs"] == chosen, "run `python -m benchmarks.gpu.bench_measured select`"
    assert committed["total"] == len(chosen)


def test_the_stride_and_the_top_up() -> None:
    rows = [
        {"family": "gemm_tma", "name": f"c{i:02}", "config": {"BLOCK_M": 64}, "smem_estimate": 0}
        for i in range(30)
    ]
    tile = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 4}
    rows[1]["config"] = rows[2]["config"] = rows[3]["config"] = tile
    picked = [r["name"] for r in measured_space.select(rows, per_family=10, min_per_class=2)]
    # every 3rd (c00, c03, ...), then the 128x256 class topped up to 2 with c01 (of c01, c02)
    assert picked == ["c00", "c01", *(f"c{i:02}" for i in range(3, 30, 3))]
    assert measured_space.spread([1, 2, 3, 4, 5, 6], 3) == [1, 3, 5]


# -- parts -----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_parts_cover_each_config_exactly_once(chosen: list[dict], n: int) -> None:
    parts = [measured_space.part(chosen, k, n) for k in range(1, n + 1)]
    assert [r for p in parts for r in p] == chosen
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1


def test_part_arguments() -> None:
    assert measured_space.parse_part("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(ValueError):
            measured_space.parse_part(bad)
    assert (
        measured_space.part_suffix(1, 1) == "" and measured_space.part_suffix(2, 3) == "-part2of3"
    )


def test_the_dry_list_prints_the_parts_configs(capsys: pytest.CaptureFixture) -> None:
    space = str(measured_space.SPACE_FILE)
    assert bench_measured.main(["--space", space, "--part", "2/3", "--list"]) == 0
    printed = [ln.split("\t")[0] for ln in capsys.readouterr().out.splitlines()]
    expected = measured_space.part(measured_space.load(measured_space.SPACE_FILE), 2, 3)
    assert printed == [f"{r['family']}.{r['name']}" for r in expected]
    assert bench_measured.main(["--list", "--family", "gemm_tma_indesc"]) == 0  # the first sweep
    assert len(capsys.readouterr().out.splitlines()) == 28
    with pytest.raises(SystemExit):
        bench_measured.main(["--space", space])  # no --out


# -- the summary -----------------------------------------------------------------------------
def variant(ms: list[float] | None, status: str = "ok", **extra) -> dict:
    entry = {"status": status, **extra}
    if ms is not None:
        entry["ms"] = ms
    return entry


def row(name: str, stock: list, optimal: list, measured: list, **extra) -> dict:
    return {
        "family": extra.pop("family", "gemm_tma"),
        "name": name,
        "triton": "3.6.0",
        "stock": variant(stock),
        "optimal": variant(optimal),
        "measured": variant(measured, first_launch_s=1.0, tuning={"extra_bytes": 2**20}),
        **extra,
    }


def synthetic() -> list[dict]:
    return [
        # optimal 9% slower, rounds apart: counted
        row("apart", [1.0, 1.01, 1.02], [1.10, 1.11, 1.12], [1.0, 1.0, 1.0]),
        # optimal 6% slower by median, but within stock's spread: not counted
        row("inside", [1.0, 1.0, 1.15], [1.05, 1.06, 1.07], [1.0, 1.0, 1.0]),
        # measured 3.3% behind optimal (the faster): counted; 1.1% behind: not
        row("behind", [1.0] * 3, [0.9] * 3, [0.93] * 3),
        row("close", [1.0] * 3, [0.9] * 3, [0.91] * 3, family="attention_fwd"),
    ]


def test_optimal_slower_only_beyond_the_spread() -> None:
    rows = {r["name"]: measured_summary.config_row(r) for r in synthetic()}
    assert measured_summary.optimal_slower(rows["apart"])
    assert not measured_summary.optimal_slower(rows["inside"])
    assert not measured_summary.optimal_slower(rows["behind"])  # faster


def test_measured_two_percent_rule() -> None:
    rows = {r["name"]: measured_summary.config_row(r) for r in synthetic()}
    assert measured_summary.measured_behind(rows["behind"])
    assert not measured_summary.measured_behind(rows["close"])
    assert not measured_summary.measured_behind(rows["apart"])  # stock is the faster: a tie
    assert measured_summary.best_base(rows["behind"]) == "optimal"


def test_summary_counts_geomeans_and_lists() -> None:
    rows = synthetic()
    rows[1]["optimal"] = variant(None, "wrong", error_rel=0.5, repeatable=True)
    rows.append(row("nostock", [], [1.0], [1.0]))
    rows[-1]["stock"] = {"status": "error", "error": "CompilationError: out of resources"}
    text = "\n".join(measured_summary.summary_lines(rows))
    assert "beyond the rounds' spread: 1 (target 0)" in text
    assert "faster of stock and optimal: 1 (target 0" in text
    # stock / optimal over apart, behind, close (inside's optimal was wrong, nostock untimed)
    g = (1.01 / 1.11 * (1.0 / 0.9) ** 2) ** (1 / 3)
    assert f"stock / optimal, geomean: {g:.3f} (n = 3)" in text
    assert "wrong: gemm_tma.inside optimal: wrong: rel err 0.5" in text
    assert "stock failed: gemm_tma.nostock: error: CompilationError" in text
    assert "| attention_fwd | 1 |" in text
    assert "median 1.00 s, max 1.00 s (n = 5; 0 read a stored choice)" in text


def test_the_tuning_over_the_bench_per_binary_both_timed() -> None:
    r = row("x", [1.0] * 3, [2.0] * 3, [1.0] * 3)
    r["stock"]["binary"], r["optimal"]["binary"] = "s", "o"
    r["measured"].update(binary="s", timed_as="stock", median_ms=1.0)
    for name in ("stock", "optimal"):
        r[name]["median_ms"] = statistics.median(r[name]["ms"])
    timed = [
        {"name": "stock", "status": "timed", "binary": "s", "ms": [1.1] * 3, "median_ms": 1.1},
        {"name": "optimal", "status": "dropped", "binary": "o", "ms": [2.0], "median_ms": 2.0},
    ]
    r["measured"]["tuning"]["candidates"] = timed
    # stock's binary once (measured took its times); optimal's had one tuning round only
    assert measured_summary.tuning_over_bench([r]) == pytest.approx([1.1])
    [line, _] = measured_summary.agreement_lines([r])
    assert "stock's binary: median 1.100" in line and "(n = 1; more than 3% apart: 1)" in line


def test_report_per_version_and_table(tmp_path: Path) -> None:
    old, new = synthetic(), synthetic()
    new[0]["optimal"]["ms"] = [0.5, 0.5, 0.5]
    later = [dict(r, triton="3.9.0") for r in synthetic()]
    files = []
    for i, rows in enumerate((old, new + later)):
        files.append(tmp_path / f"r{i}.jsonl")
        files[-1].write_text("".join(json.dumps(r) + "\n" for r in rows))
    merged = measured_summary.load(files)
    assert len(merged) == 8
    apart = next(r for r in merged if r["name"] == "apart" and r["triton"] == "3.6.0")
    assert apart["optimal"]["ms"] == [0.5, 0.5, 0.5]  # the later file's record
    text = measured_summary.report(merged)
    assert "## Triton 3.6.0" in text and "## Triton 3.9.0" in text
    assert "| gemm_tma.apart | 1.0100 | 2.020 | 1.010 |" in text
    assert bench_measured.main(["summary", *map(str, files), "--out", str(tmp_path / "s.md")]) == 0
    assert (tmp_path / "s.md").read_text().strip() == text.strip()


# -- the census, from the records the drop-in's decision check writes ---------------------------
CLEAN = BinaryUsage(168, 0, 0, 0, False)
SPILLING = BinaryUsage(255, 1696, 1696, 1600, True)


def decision(ours_usage: BinaryUsage, stock: Built, other: Built | None = None) -> dict:
    ours = Candidate("optimal", "<optimal>", [], False)
    flipped = Candidate("heuristic, forced", "<forced>", [], True)
    builds = {"optimal": Built("ok", False, ours_usage)}
    builds["heuristic, forced"] = other or Built("error", reason="boom")
    return settle(ours, SM90, lambda c: flipped, lambda c: builds[c.label], lambda: stock).record


def test_decision_usage_names_the_kept_kernel() -> None:
    kept_stock = measured_summary.decision_usage(decision(SPILLING, Built("ok", True, CLEAN)))
    assert kept_stock["kept"] == "stock"
    assert kept_stock["kept_usage"] == {"registers": 168, "spilled_bytes": 0}
    spills = measured_summary.decision_usage(decision(SPILLING, Built("ok", False, SPILLING)))
    assert spills["kept"] == "optimal" and spills["kept_usage"]["spilled_bytes"] == 1696
    assert measured_summary.decision_usage({}) == {}


def test_census_counts_kept_spills_where_stock_is_clean() -> None:
    rows = synthetic()
    use = measured_summary.decision_usage(decision(SPILLING, Built("error", reason="boom")))
    rows[0]["optimal"]["usage"] = {**use, "stock_usage": {"registers": 90, "spilled_bytes": 0}}
    rows[1]["optimal"]["usage"] = measured_summary.decision_usage(
        decision(SPILLING, Built("ok", True, CLEAN))
    )  # stock's kernel kept: no spill
    rows[2]["optimal"].update(n_spills=4)
    rows[2]["stock"].update(n_spills=0)
    text = "\n".join(measured_summary.census_lines(rows))
    assert "(decision record): 1; the launched binary has local memory and stock's none: " in text
    assert "optimal 1, measured 0" in text
    assert "gemm_tma.apart: kept optimal" in text

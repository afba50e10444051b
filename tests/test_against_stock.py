"""benchmarks/analysis/against_stock.py: issue 22's measure, stock's time over ws_solver's
(CPU only)."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.analysis import against_stock as ag
from benchmarks.common import stats


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


def _run(path, gpu: str | None, ms: float, configs: str = "a") -> str:
    rows = []
    for config in configs:
        rows += [
            {**_row(config, "builtin", 2.0, f"s{config}"), "job": f"k.{config}.builtin"},
            {**_row(config, "optimal", ms, f"o{config}"), "job": f"k.{config}.optimal"},
        ]
    environment = {"gpu_serial": gpu} if gpu else {}
    path.write_text(json.dumps({"environment": environment, "results": rows}))
    return str(path)


def test_over_n_configs_counts_the_untimed_as_one(tmp_path, capsys) -> None:
    run = _run(tmp_path / "r.json", "g1", 1.6)  # one config timed, 1.25
    assert ag.main(["--over", "4", run]) == 0
    assert f"over 4: {1.25**0.25:.4f}" in capsys.readouterr().out
    assert ag.main(["--over", "1", _run(tmp_path / "two.json", "g1", 1.6, "ab")]) == 2
    assert "2 configs timed, more than the 1 asked" in capsys.readouterr().err


def test_by_gpu_gives_each_gpus_median_and_the_interval_over_gpus(tmp_path, capsys) -> None:
    runs = [
        _run(tmp_path / f"{gpu}{k}.json", gpu, ms)
        for gpu, times in (("g1", (1.6, 1.5)), ("g2", (1.6,)), ("g3", (1.7,)))
        for k, ms in enumerate(times)
    ]
    assert ag.main(["--by-gpu", *runs]) == 0
    out = capsys.readouterr().out
    assert "GPU g1, 2 runs: 1.2500-1.3333, median 1.2917" in out
    mean, low, high = stats.mean_interval([(2 / 1.6 + 2 / 1.5) / 2, 2 / 1.6, 2 / 1.7])
    assert f"3 GPUs: mean of medians {mean:.4f}, 95% interval {low:.4f}-{high:.4f}" in out
    assert ag.main(["--by-gpu", runs[0], _run(tmp_path / "anon.json", None, 1.6)]) == 2
    assert "anon.json: the run does not name its GPU" in capsys.readouterr().err


def test_mean_interval_is_students_t() -> None:
    mean, low, high = stats.mean_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and high - mean == pytest.approx(4.303 / math.sqrt(3))
    assert stats.mean_interval([1.0]) is None
    assert stats.mean_interval([1.0] * 40)[1:] == (1.0, 1.0)  # the normal quantile beyond 30


def test_gpu_serial_asks_nvidia_smi_and_says_none_when_it_cannot(monkeypatch) -> None:
    import subprocess
    from types import SimpleNamespace

    from benchmarks.gpu import bench_kernels

    asked = []

    def fake(cmd, **kw):
        asked.append(cmd)
        return SimpleNamespace(returncode=0, stdout="1654024030512\n")

    monkeypatch.setattr(subprocess, "run", fake)
    assert bench_kernels.gpu_serial("abc") == "1654024030512"
    assert asked[-1][-2:] == ["-i", "GPU-abc"]
    monkeypatch.setattr(
        subprocess, "run", lambda cmd, **kw: SimpleNamespace(returncode=0, stdout="[N/A]\n")
    )
    assert bench_kernels.gpu_serial(None) is None

    def missing(cmd, **kw):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(subprocess, "run", missing)
    assert bench_kernels.gpu_serial("abc") is None

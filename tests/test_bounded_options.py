"""Options that bound the work and the state (issue 36, items 8 and 9): explore's K is capped
(explore --k, "explore:K") with a clear error, and `enable()` checks every option, cache_dir
included, before it changes anything: a bad one is named and the previous state stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.strategy import MAX_PLANS, parse_strategy
from ws_solver.pipeline.exploration import explore_module

REPO = Path(__file__).resolve().parent.parent
GEMM = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"


# -- explore's K ------------------------------------------------------------------------------
def test_explore_k_above_the_cap_is_a_usage_error(ws_solver) -> None:
    for k in (str(MAX_PLANS + 1), "100000000"):
        done = ws_solver("explore", GEMM, "--k", k, timeout=60)
        assert done.returncode == 2
        assert f"argument --k: at most {MAX_PLANS} plans per loop, got {k}" in done.stderr
        assert not done.stdout


def test_explore_rank_above_the_cap_is_refused() -> None:
    assert parse_strategy(f"explore:{MAX_PLANS - 1}").rank == MAX_PLANS - 1
    for rank in (str(MAX_PLANS), "99999999", "9" * 5000):
        with pytest.raises(ValueError, match=f"K is at most {MAX_PLANS - 1}") as caught:
            parse_strategy(f"explore:{rank}")
        assert len(str(caught.value)) < 200  # one line, not the whole name
    with pytest.raises(ValueError, match=f"between 1 and {MAX_PLANS}"):
        explore_module(ir.parse(GEMM.read_text()), MAX_PLANS + 1)


# -- enable() ---------------------------------------------------------------------------------
triton = pytest.importorskip("triton")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    from triton import knobs

    import ws_solver.triton as wst

    monkeypatch.setenv("WS_SOLVER_CACHE_DIR", str(tmp_path / "plans"))
    with knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = str(tmp_path / "triton")
        knobs.runtime.add_stages_inspection_hook = None
        try:
            yield tmp_path, wst
        finally:
            wst.disable()


BAD = {
    "cache_dir=123": ({"cache_dir": 123}, TypeError, "cache_dir must be a path"),
    "cache_dir in /proc/1": (
        {"cache_dir": "/proc/1/nope"},
        ValueError,
        "cache_dir '/proc/1/nope' cannot be written in '/proc/1'",
    ),
    "cache_dir a file": ({"cache_dir": __file__}, ValueError, "cache_dir .* is not a folder"),
    "cache_dir empty": ({"cache_dir": ""}, ValueError, "cache_dir '' is not a path"),
    "explore rank": ({"strategy": "explore:99999999"}, ValueError, "K is at most"),
    "time_limit": ({"time_limit": -1}, ValueError, "time_limit"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_enable_option_is_named_and_changes_nothing(isolated, case: str) -> None:
    tmp_path, wst = isolated
    from triton import knobs

    before = wst.enable("heuristic", cache_dir=tmp_path / "first")
    hook, cache = knobs.runtime.add_stages_inspection_hook, knobs.cache.dir
    kwargs, error, says = BAD[case]
    kwargs = {"strategy": "optimal", **kwargs}
    with pytest.raises(error, match=says):
        wst.enable(**kwargs)
    assert wst.is_enabled() and wst.current_settings() == before
    assert knobs.runtime.add_stages_inspection_hook is hook and knobs.cache.dir == cache
    wst.disable()
    with pytest.raises(error, match=says):
        wst.enable(**kwargs)
    assert not wst.is_enabled()


def test_a_new_cache_dir_is_accepted_and_not_made_yet(isolated) -> None:
    tmp_path, wst = isolated
    wst.enable("heuristic", cache_dir=os.fsencode(tmp_path / "new" / "deep"))
    assert wst.cache_dir().startswith(str(tmp_path / "new" / "deep"))
    assert not (tmp_path / "new").exists()  # Triton makes it when it compiles there

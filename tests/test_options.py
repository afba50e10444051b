"""Solver and drop-in options are checked where they enter: one ValueError line, at once,
not an OR-Tools failure or a silent fallback at compile time (no Triton needed)."""

from __future__ import annotations

import pytest

import ws_solver.triton as wst
from ws_solver.core import options
from ws_solver.pipeline.partition import SolveOptions

BAD = [
    ({"time_limit": "abc"}, "time_limit must be a number"),
    ({"time_limit": 0}, "time_limit must be a positive"),
    ({"time_limit": float("nan")}, "time_limit must be a positive"),
    ({"time_limit": True}, "time_limit must be a number"),
    ({"workers": 2.5}, "workers must be an integer from 1 to 256"),
    ({"workers": 0}, "workers must be an integer"),
    ({"workers": "2"}, "workers must be an integer"),
    ({"seed": 2**31}, "seed must be an integer from 0 to 2147483647"),
    ({"seed": -1}, "seed must be an integer"),
    ({"cache": "no"}, "cache must be True or False"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_solve_options_reject_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SolveOptions(**kwargs)


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_enable_rejects_bad_values_before_installing(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wst.enable("optimal", **kwargs)
    assert not wst.is_enabled()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lowering_timeout": "abc"}, "lowering_timeout must be a number"),
        ({"lowering_timeout": -1}, "lowering_timeout must be a positive"),
        ({"partition_timeout": float("inf")}, "partition_timeout must be a positive"),
        ({"apply_registers": "yes"}, "apply_registers must be True or False"),
        ({"overlap_wgmma": None}, "overlap_wgmma must be True or False"),
    ],
)
def test_enable_rejects_bad_drop_in_options(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wst.enable("heuristic", **kwargs)


def test_enable_rejects_unknown_options() -> None:
    with pytest.raises(TypeError, match="unknown options: tim_limit"):
        wst.enable("heuristic", tim_limit=5)


def test_enable_carries_a_solve_options_object_whole() -> None:
    from ws_solver.triton.dropin.switch import solve_options

    given = SolveOptions(time_limit=3, seed=7, cache=False)
    loose = {
        "time_limit": options.DEFAULT_TIME_LIMIT,
        "workers": options.DEFAULT_WORKERS,
        "seed": 0,
        "cache": True,
    }
    assert solve_options(given, loose) is given  # not taken apart and rebuilt
    assert solve_options(None, {**loose, "seed": 7}) == SolveOptions(seed=7)
    with pytest.raises(TypeError, match="give solve= or seed, time_limit, not both"):
        wst.enable("heuristic", 3.0, seed=5, solve=given)
    with pytest.raises(TypeError, match="solve must be SolveOptions, not dict"):
        wst.enable("heuristic", solve={"time_limit": 3})
    assert not wst.is_enabled()


def test_strategy_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown strategy 'best'"):
        wst.enable("best")


def test_one_default_for_workers_everywhere() -> None:
    import inspect

    from ws_solver.cli import build_parser
    from ws_solver.encode import solve

    assert SolveOptions().workers == options.DEFAULT_WORKERS
    assert inspect.signature(wst.enable).parameters["workers"].default == options.DEFAULT_WORKERS
    assert inspect.signature(solve).parameters["budget"].default.workers == options.DEFAULT_WORKERS
    parser = build_parser()
    for command in ("partition", "compare", "explain", "explore", "demo", "tune"):
        args = parser.parse_args([command] if command in ("demo", "tune") else [command, "x"])
        assert args.workers == options.DEFAULT_WORKERS, command


def test_one_default_time_limit_for_each_kind_of_run() -> None:
    """One plan per loop: DEFAULT_TIME_LIMIT; many plans compared: SURVEY_TIME_LIMIT."""
    import inspect

    from ws_solver.cli import build_parser
    from ws_solver.encode import solve
    from ws_solver.encode.alternatives import alternatives
    from ws_solver.pipeline.exploration import explore

    def default(function, name: str):
        return inspect.signature(function).parameters[name].default

    assert SolveOptions().time_limit == options.DEFAULT_TIME_LIMIT
    assert default(wst.enable, "time_limit") == options.DEFAULT_TIME_LIMIT
    assert default(solve, "budget").time_limit == options.DEFAULT_TIME_LIMIT
    assert default(alternatives, "budget").time_limit == options.SURVEY_TIME_LIMIT
    assert default(explore, "time_limit") == options.SURVEY_TIME_LIMIT
    parser = build_parser()
    for command, limit in (
        ("partition", options.DEFAULT_TIME_LIMIT),
        ("explain", options.DEFAULT_TIME_LIMIT),
        ("tune", options.DEFAULT_TIME_LIMIT),
        ("compare", options.SURVEY_TIME_LIMIT),
        ("explore", options.SURVEY_TIME_LIMIT),
        ("demo", options.SURVEY_TIME_LIMIT),
    ):
        args = parser.parse_args([command] if command in ("demo", "tune") else [command, "x"])
        assert args.time_limit == limit, command


def test_limits_are_inclusive() -> None:
    assert options.check_seed(options.MAX_SEED) == options.MAX_SEED
    assert options.check_workers(options.MAX_WORKERS) == options.MAX_WORKERS
    assert options.parse_time_limit("1e-3") == 0.001
    assert options.check_optional_seconds(0, "t") is None
    assert SolveOptions(time_limit=2).time_limit == 2.0 and isinstance(
        SolveOptions(time_limit=2).time_limit, float
    )

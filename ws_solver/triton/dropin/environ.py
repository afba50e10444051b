"""``enable()`` from environment variables: ``WS_SOLVER=<strategy>`` and the ``WS_SOLVER_*``
options, read when a process imports Triton (``ws_solver.autoload``; docs/torch-compile.md).

Each variable is text for one ``enable()`` keyword, turned into a value by the parser the
command line uses for the same option (``ws_solver.core.options``); ``enable()`` then checks every
value as it does for a caller. A bad value never breaks the host program: the process prints
one line naming the variable to stderr, records it in the compile log (``WS_SOLVER_REPORT``)
and leaves ws_solver off; Triton compiles as if ws_solver were not installed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ...core import options
from ...core.envvars import REPORT, VARIABLE
from ...core.strategy import DROPIN_STRATEGIES, parse_strategy
from . import reportlog
from .switch import check_cache_dir, check_dump_dir, enable


@dataclass(frozen=True)
class Variable:
    """One ``WS_SOLVER_*`` variable: the ``enable()`` keyword it sets, and how its text reads."""

    name: str
    keyword: str
    parse: Callable[[str], Any]


def _seconds(name: str) -> Callable[[str], Any]:
    return lambda text: options.parse_optional_seconds(text, name)


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _report_file(text: str) -> str | None:
    return reportlog.check_path(text, "the report file")


def _strategy(text: str) -> Any:
    # enable()'s own check, as it is: " optimal" is refused here as it is there.
    return parse_strategy(text, DROPIN_STRATEGIES)


# The table in docs/torch-compile.md lists these, with their defaults (enable()'s).
VARIABLES: tuple[Variable, ...] = (
    Variable(VARIABLE, "strategy", _strategy),
    Variable("WS_SOLVER_TIME_LIMIT", "time_limit", options.parse_time_limit),
    Variable("WS_SOLVER_WORKERS", "workers", options.parse_workers),
    Variable("WS_SOLVER_SEED", "seed", options.parse_seed),
    Variable("WS_SOLVER_CACHE", "cache", options.parse_flag),
    Variable("WS_SOLVER_TRITON_CACHE_DIR", "cache_dir", check_cache_dir),
    Variable("WS_SOLVER_CHECK_DECISION", "check_decision", options.parse_flag),
    Variable("WS_SOLVER_PARALLEL_BUILDS", "parallel_builds", options.parse_flag),
    Variable("WS_SOLVER_LOWERING_TIMEOUT", "lowering_timeout", _seconds("the lowering timeout")),
    Variable("WS_SOLVER_PARTITION_TIMEOUT", "partition_timeout", _seconds("the partition timeout")),
    Variable("WS_SOLVER_APPLY_REGISTERS", "apply_registers", options.parse_flag),
    Variable("WS_SOLVER_OVERLAP_WGMMA", "overlap_wgmma", options.parse_flag),
    Variable("WS_SOLVER_RELEASE_PER_WARP_GROUP", "release_per_warp_group", options.parse_flag),
    Variable("WS_SOLVER_TAKE_TURNS", "take_turns", options.parse_flag),
    Variable("WS_SOLVER_SKIP", "skip", _patterns),
    Variable(REPORT, "report_file", _report_file),
    Variable("WS_SOLVER_DUMP", "dump_dir", check_dump_dir),
    Variable("WS_SOLVER_CANDIDATES", "candidates", _patterns),
)


class EnvironmentSettingError(ValueError):
    """A ``WS_SOLVER*`` variable whose value ``enable()`` cannot take; ``variable`` names it."""

    def __init__(self, variable: str, message: str) -> None:
        super().__init__(message)
        self.variable = variable


# WS_SOLVER_* variables of ws_solver that are not enable() options: the plan cache's folder
# (plancache.ENV_DIR), the CLI's tracebacks, the autotuner's switch, the benchmarks' revision.
_OTHERS = frozenset(
    {
        "WS_SOLVER_CACHE_DIR",
        "WS_SOLVER_DEBUG",
        "WS_SOLVER_AUTOTUNE",
        "WS_SOLVER_REVISION",
        "WS_SOLVER_LOG",
    }
)


def enable_arguments(environ: Mapping[str, str]) -> dict[str, Any]:
    """``enable()``'s keywords from ``environ`` (the variables set and not empty);
    EnvironmentSettingError for the first that does not read."""
    unknown = sorted(
        k
        for k in environ
        if k.startswith(VARIABLE + "_") and k not in {v.name for v in VARIABLES} | _OTHERS
    )
    if unknown:
        known = ", ".join(v.name for v in VARIABLES[1:])
        raise EnvironmentSettingError(
            unknown[0], f"{unknown[0]}: not a ws_solver variable (known: {known})"
        )
    arguments: dict[str, Any] = {}
    for variable in VARIABLES:
        text = environ.get(variable.name, "")
        if not text:
            continue
        try:
            arguments[variable.keyword] = variable.parse(text)
        except ValueError as e:
            raise EnvironmentSettingError(
                variable.name, f"{variable.name}={text[:200]!r}: {e}"
            ) from None
    return arguments


def activate(environ: Mapping[str, str] | None = None) -> bool:
    """Switch the drop-in on as ``environ`` (default ``os.environ``) asks; whether it is on.
    Any failure: one line on stderr, an "off" record in the compile log, ws_solver off."""
    environ = os.environ if environ is None else environ
    if not environ.get(VARIABLE):
        return False
    log = _log_path(environ)
    try:
        arguments = enable_arguments(environ)
        settings = _enable(arguments)
    except EnvironmentSettingError as e:
        _stay_off(e.variable, str(e), log)
        return False
    except Exception as e:  # an unsupported Triton, a dependency missing: still one line
        _stay_off(VARIABLE, f"{VARIABLE}: {type(e).__name__}: {e}", log)
        return False
    if log is not None:
        record = {
            **reportlog.process_fields("enabled"),
            "strategy": str(settings.strategy),
            "settings": _settings_data(settings),
            "argv": list(getattr(sys, "argv", []))[:20],
        }
        _append(log, record)
    return True


def _enable(arguments: dict[str, Any]) -> Any:
    # Nothing is compiled yet when Triton has just been imported: no caches to reset.
    try:
        return enable(reset_caches=False, **arguments)
    except (ValueError, TypeError) as e:  # the parsers above leave enable() nothing to refuse
        raise EnvironmentSettingError(VARIABLE, f"{VARIABLE}: {e}") from e


def _log_path(environ: Mapping[str, str]) -> str | None:
    """The compile log to record in, if ``WS_SOLVER_REPORT`` names a usable one."""
    text = environ.get(REPORT, "")
    if not text:
        return None
    try:
        return _report_file(text)
    except ValueError:
        return None


def _stay_off(variable: str, message: str, log: str | None) -> None:
    print(
        f"ws_solver: {message}; ws_solver is off in this process (pid {os.getpid()})",
        file=sys.stderr,
        flush=True,
    )
    if log is not None:
        _append(log, {**reportlog.process_fields("off"), "variable": variable, "reason": message})


def _append(log: str, record: dict) -> None:
    try:
        reportlog.append(log, record)
    except OSError as e:
        print(f"ws_solver: cannot append to {REPORT} {log!r}: {e}", file=sys.stderr, flush=True)


def _settings_data(settings: Any) -> dict:
    data = asdict(settings)
    data["strategy"] = str(settings.strategy)
    return data

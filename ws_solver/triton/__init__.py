"""ws_solver as a drop-in partitioner for ``@triton.jit`` kernels (Triton 3.6.0, sm_90/sm_100).

    import ws_solver.triton as wst
    wst.enable("optimal")          # or "heuristic", "triton", "none", "stock", "measured"
    my_kernel[grid](...)           # compiled through ws_solver
    wst.last_compile_report()

    @wst.autotune(key=["M", "N"])  # the fastest correct candidate, measured at launch
    @triton.jit
    def my_kernel(...): ...

See docs/dropin.md and docs/autotune.md. Importing this package does not import Triton;
``enable()`` and ``autotune`` do.
"""

from typing import Any

from .dropin import launches
from .dropin.session import FALLBACKS, STRATEGIES, CompileReport, Settings, WSFallbackWarning
from .dropin.switch import (
    cache_dir,
    compile_reports,
    current_settings,
    disable,
    enable,
    is_enabled,
    last_compile_report,
    partitioner,
    reset_jit_caches,
)
from .toolchain.unlaunchable import TensorMemoryOverflow
from .toolchain.versions import SUPPORTED as SUPPORTED_TRITON_VERSIONS
from .toolchain.versions import UnsupportedTritonVersion


def _measurer(jit: Any, session: Any) -> Any:
    """Measured mode's per-kernel tuner (the autotuning floor), for the drop-in's launches."""
    from .autotuning.measured import measurer

    return measurer(jit, session)


launches.measurer_factory = _measurer

# In ws_solver.triton.autotuning.autotuner, which imports Triton: loaded on first use.
_AUTOTUNER = ("autotune", "Autotuner", "WSTuningWarning", "last_tuning_report", "tuning_reports")

__all__ = [
    "SUPPORTED_TRITON_VERSIONS",
    "UnsupportedTritonVersion",
    *_AUTOTUNER,
    "FALLBACKS",
    "STRATEGIES",
    "CompileReport",
    "Settings",
    "TensorMemoryOverflow",
    "WSFallbackWarning",
    "cache_dir",
    "compile_reports",
    "current_settings",
    "disable",
    "enable",
    "is_enabled",
    "last_compile_report",
    "partitioner",
    "reset_jit_caches",
]


def __getattr__(name: str) -> Any:
    if name in _AUTOTUNER:
        from .autotuning import autotuner

        value = getattr(autotuner, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

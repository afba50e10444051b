"""ws_solver as a drop-in partitioner for ``@triton.jit`` kernels (Triton 3.6.0, sm_90/sm_100).

    import ws_solver.triton as wst
    wst.enable("optimal")          # or "heuristic", "triton", "none"
    my_kernel[grid](...)           # compiled through ws_solver
    wst.last_compile_report()

See docs/dropin.md. Importing this package does not import Triton; ``enable()`` does.
"""

from .dropin import (
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
from .session import FALLBACKS, STRATEGIES, CompileReport, Settings, WSFallbackWarning

__all__ = [
    "FALLBACKS",
    "STRATEGIES",
    "CompileReport",
    "Settings",
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

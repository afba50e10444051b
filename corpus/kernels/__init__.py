"""Triton kernels whose loops ask for warp specialization (``tl.range(..., warp_specialize=True)``).

Every module exposes ``KERNEL``, ``CONFIGS``, ``signature(config)`` and the GPU helpers
``make_inputs(config, size, seed)``, ``launch(config, inputs)`` and ``reference(inputs)``.
A config is one flat dict: kernel constexprs plus the compile options in ``OPTION_KEYS``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

KERNEL_MODULES: tuple[str, ...] = (
    "gemm_tma",
    "gemm_persistent",
    "gemm_fp8",
    "gemm_pointer",
    "attention_fwd",
    "attention_bwd",
    "gemm_grouped",
    "gemm_cond_reset",
    "row_reduce",
)

OPTION_KEYS: frozenset[str] = frozenset({"num_warps", "num_stages", "maxnreg"})


def load(name: str) -> ModuleType:
    """Import one kernel module of the corpus by its short name."""
    return importlib.import_module(f"{__name__}.{name}")


def constexprs(config: dict) -> dict:
    """The kernel constexpr part of a config."""
    return {k: v for k, v in config.items() if k not in OPTION_KEYS}


def options(config: dict) -> dict:
    """The compile-option part of a config."""
    return {k: v for k, v in config.items() if k in OPTION_KEYS}

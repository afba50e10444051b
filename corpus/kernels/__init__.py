"""Triton kernels whose loops ask for warp specialization (``tl.range(..., warp_specialize=True)``).

Every module exposes ``KERNEL``, ``CONFIGS``, ``signature(config)`` and the GPU helpers
``make_inputs(config, size, seed)``, ``launch(config, inputs)`` and ``reference(inputs)``.
A config is one flat dict: kernel constexprs plus the compile options in ``OPTION_KEYS``.
``KERNEL_MODULES`` are the ones dumped into ``corpus/ttgir``; ``attention_unrolled`` (the
attention loop unrolled, for ``benchmarks/cpu/bench_scale.py``) is dumped only by that benchmark;
the other forms of gemm_tma, gemm_fp8, gemm_persistent and attention_fwd (``*_indesc``:
descriptors made in the kernel, ``*_pointer``: pointer loads) are config-space families only
(``corpus/configspace.py``).
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

# make_inputs arguments of a timing run: sizes that fill an H200. Also the config-space
# families outside KERNEL_MODULES (corpus/configspace.py: the other forms).
BENCH_INPUTS: dict[str, dict] = {
    "gemm_tma": {"size": 8192},
    "gemm_tma_indesc": {"size": 8192},
    "gemm_pointer": {"size": 8192},
    "gemm_persistent": {"size": 8192},
    "gemm_persistent_indesc": {"size": 8192},
    "gemm_persistent_pointer": {"size": 8192},
    "gemm_fp8": {"size": 8192},
    "gemm_fp8_indesc": {"size": 8192},
    "gemm_fp8_pointer": {"size": 8192},
    "gemm_cond_reset": {"size": 8192},
    "gemm_grouped": {"size": 8192},
    "attention_fwd": {"size": 8192, "batch": 4, "heads": 32},
    "attention_fwd_indesc": {"size": 8192, "batch": 4, "heads": 32},
    "attention_fwd_pointer": {"size": 8192, "batch": 4, "heads": 32},
    "attention_bwd": {"size": 4096, "batch": 4, "heads": 32},
    "row_reduce": {"size": 16384},
}


def load(name: str) -> ModuleType:
    """Import one kernel module of the corpus by its short name."""
    return importlib.import_module(f"{__name__}.{name}")


def constexprs(config: dict) -> dict:
    """The kernel constexpr part of a config."""
    return {k: v for k, v in config.items() if k not in OPTION_KEYS}


def options(config: dict) -> dict:
    """The compile-option part of a config."""
    return {k: v for k, v in config.items() if k in OPTION_KEYS}

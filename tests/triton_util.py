"""Helpers for tests that check TTGIR text against Triton's own MLIR parser.

Import this only after `pytest.importorskip("triton")`.
"""

from __future__ import annotations

import os
import tempfile
from functools import cache
from pathlib import Path

from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend


def capability(path: str | Path) -> int:
    """Compute capability of a corpus file, from its `*.sm90.ttgir` / `*.sm100.ttgir` name."""
    name = Path(path).name
    if name.endswith(".sm90.ttgir"):
        return 90
    if name.endswith(".sm100.ttgir"):
        return 100
    raise ValueError(f"{name}: no .sm90/.sm100 target in the file name")


@cache
def context(cap: int) -> ir.context:
    ctx = ir.context()
    ir.load_dialects(ctx)
    CUDABackend(GPUTarget("cuda", cap, 32)).load_dialects(ctx)
    return ctx


def parse_with_triton(text: str, cap: int):
    """Parse (and verify) TTGIR text with Triton; raises RuntimeError if Triton rejects it."""
    fd, path = tempfile.mkstemp(suffix=".ttgir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return ir.parse_mlir_module(path, context(cap))
    finally:
        os.unlink(path)


def compile_corpus_kernel(
    kernel: str, config: dict, strategy: str, capability: int = 90, **settings
):
    """A corpus kernel compiled with `config` through the drop-in (`settings`: enable()'s
    keywords), on the CPU; the drop-in's binaries go to a folder removed afterwards, and
    Triton's own cache settings are restored."""
    import triton

    from corpus import kernels as corpus_kernels
    from corpus.dump import ast_source
    from ws_solver.triton.dropin import switch as dropin

    src = ast_source(kernel, config)
    with (
        tempfile.TemporaryDirectory(prefix="ws_test_cache_") as cache_dir,
        dropin.partitioner(strategy, cache_dir=cache_dir, **settings),
    ):
        return triton.compile(
            src,
            target=GPUTarget("cuda", capability, 32),
            options=corpus_kernels.options(config),
        )


def compile_corpus_config(
    kernel: str, config: dict, strategy: str, capability: int = 90, **settings
) -> str:
    """Final TTGIR of a corpus kernel compiled with `config` through the drop-in."""
    settings.setdefault("lowering_timeout", None)
    return compile_corpus_kernel(kernel, config, strategy, capability, **settings).asm["ttgir"]

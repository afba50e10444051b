"""Stock Triton's own kernel as a candidate of the drop-in's decision (issue 48), compiled on
the CPU: the kernels where ws_solver's builds lose to stock's (spills, tensor memory) keep
stock's kernel, and `enable("stock")` is stock Triton with a report."""

from __future__ import annotations

import hashlib
import re
import tempfile
import warnings

import pytest

triton = pytest.importorskip("triton")

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton_util import compile_corpus_kernel  # noqa: E402

from corpus import configspace  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402
from corpus.dump import ast_source  # noqa: E402
from ws_solver.triton.toolchain import versions  # noqa: E402

pytestmark = [pytest.mark.triton, pytest.mark.slow]


def _stock(kernel: str, config: dict, capability: int):
    """The kernel compiled by Triton alone (no hook), in a cache of its own."""
    from triton import knobs

    with tempfile.TemporaryDirectory() as cache, knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = cache
        knobs.runtime.add_stages_inspection_hook = None
        return triton.compile(
            ast_source(kernel, config),
            target=GPUTarget("cuda", capability, 32),
            options=corpus_kernels.options(config),
        )


def _digest(compiled) -> str:
    """The kernel up to what does not make it another kernel: the numbering Triton 3.6's own
    sm_90 pass does not keep fixed (two of its mbarriers swap places between compiles of one
    kernel, stock's alone included) and source locations (value names and line info differ
    when the TTIR is parsed from text). The PTX's instructions with their numbers masked, and
    the launch's warps and shared memory."""
    code = [ln for ln in compiled.asm["ptx"].splitlines() if not ln.lstrip().startswith(".")]
    masked = re.sub(r"\d+", "N", "\n".join(code))
    meta = compiled.metadata
    return hashlib.sha256(f"{masked}|{meta.num_warps}|{meta.shared}".encode()).hexdigest()


def test_two_consumer_groups_keep_stocks_binary():
    """sm_90, descriptors made in the kernel, 4 warps, 128x256: stock splits the tile between
    two consumer warp groups without a spill; every build of ws_solver's spills (the
    unspecialized kernel ~1,700 B). `optimal` keeps stock's binary and says why."""
    config = corpus_kernels.load("gemm_tma_indesc").CONFIGS["t128x256x64_w4_s3"]
    ours = compile_corpus_kernel("gemm_tma_indesc", config, "optimal", 90)
    report = ours.metadata.ws_solver
    assert report["strategy_used"] == "stock"
    decision = report["decision"]
    assert decision["rule"] == "spill check: stock" and decision["kept"] == "stock"
    assert "stock 168 registers, no spill" in decision["evidence"]
    assert _digest(ours) == _digest(_stock("gemm_tma_indesc", config, 90))


def test_stock_strategy_is_stocks_binary_with_a_report():
    config = corpus_kernels.load("gemm_tma_indesc").CONFIGS["t128x128x64_w4_s3"]
    ours = compile_corpus_kernel("gemm_tma_indesc", config, "stock", 90)
    report = ours.metadata.ws_solver
    assert report["strategy_asked"] == "stock" and report["strategy_used"] == "stock"
    assert report["notes"] == ["stock: Triton's own kernel, as asked"]
    assert _digest(ours) == _digest(_stock("gemm_tma_indesc", config, 90))


@pytest.mark.parametrize("strategy", ["optimal", "none"])
def test_enabling_never_turns_a_compiling_kernel_into_an_error(strategy):
    """sm_100, a persistent 128x256 GEMM: under Triton 3.6 every kernel ws_solver builds needs
    768 tensor-memory columns of the SM's 512; stock's specialized kernel fits. The compile
    keeps stock's kernel instead of raising TensorMemoryOverflow."""
    entry = next(e for e in configspace.space("gemm_persistent") if e.name == CASE_SM100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = compile_corpus_kernel("gemm_persistent", entry.config, strategy, 100)
    report = ours.metadata.ws_solver
    if versions.installed().name == "3.6.0":
        assert report["strategy_used"] == "stock"
        if strategy == "optimal":
            assert report["decision"]["rule"] == "stock: ours not built"
            assert "768 columns" in report["decision"]["evidence"]
        else:
            assert "768 columns" in report["fallbacks"][0]["reason"]
        assert _digest(ours) == _digest(_stock("gemm_persistent", entry.config, 100))


CASE_SM100 = "t128x256x64_gelu_flat_w4_s2"

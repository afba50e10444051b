"""What the drop-in's compile does not do twice (issue 49): ptxas runs once per PTX (the
decision check's cubin is the compile's), stock's kernel is built only where a rule weighs it,
and enable() starts the helper and the solver's import before the first compile. CPU only."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("triton")

from test_dropin import _compile, isolated  # noqa: E402, F401
from test_dropin_guard import GEMM, _job, fresh_guard  # noqa: E402, F401
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia.compiler import CUDABackend  # noqa: E402

import ws_solver.triton as wst  # noqa: E402
from ws_solver.triton.dropin import kernel_compile  # noqa: E402
from ws_solver.triton.dropin import switch as dropin  # noqa: E402
from ws_solver.triton.guard import client as lguard  # noqa: E402
from ws_solver.triton.toolchain.binary_usage import cubin_key  # noqa: E402

pytestmark = pytest.mark.triton

REUSED = "ptxas run once: the decision check's cubin of this PTX"


def test_a_probe_keeps_its_cubin_out_of_the_verdict(fresh_guard, tmp_path) -> None:  # noqa: F811
    """The verdict (kept as JSON) carries the build's facts, not its cubin; the cubin is kept
    in memory under the key of the PTX it was assembled from."""
    job = _job(GEMM, 100)
    verdict = fresh_guard.probe(job, 60, cache_dir=tmp_path, function=kernel_compile.BINARY_PROBE)
    assert verdict.ok and "usage" in verdict.facts and "binary" not in verdict.facts
    (stored,) = tmp_path.glob("*.json")
    assert "binary" not in json.loads(stored.read_text())["verdict"]["facts"]
    assert len(fresh_guard._binaries) == 1
    (cubin,) = fresh_guard._binaries.values()
    assert cubin[:4] == b"\x7fELF"
    assert fresh_guard.assembled("not a key") is None


def test_the_compiles_cubin_is_ptxas_own_of_its_ptx(isolated) -> None:  # noqa: F811
    """sm_90, a 4-warp 128x128 TMA GEMM that `optimal` leaves unspecialized: the decision
    check's build is the compile's PTX, so its cubin is reused, and it is byte for byte what
    Triton's own ptxas run makes of the compiled PTX."""
    wst.enable("optimal", cache_dir=isolated / "c")
    compiled = _compile("gemm_tma_indesc", 90, "t128x128x64_w4_s3")
    report = wst.last_compile_report()
    wst.disable()
    assert report.strategy_used == "optimal" and REUSED in report.notes
    backend = CUDABackend(GPUTarget("cuda", 90, 32))
    options = backend.parse_options({"num_warps": 4, "num_stages": 3})
    assert backend.make_cubin(compiled.asm["ptx"], {}, options, 90) == compiled.asm["cubin"]


def test_stock_is_not_built_where_no_rule_weighs_it(isolated) -> None:  # noqa: F811
    """On sm_90 (a measured target) a kernel of ours that builds without a spill does not
    wait for stock's build; the report says it was not needed."""
    wst.enable("optimal", cache_dir=isolated / "c")
    _compile("gemm_tma_indesc", 90, "t128x128x64_w4_s3")
    report = wst.last_compile_report()
    wst.disable()
    assert report.decision["rule"] == "measured target"
    assert report.decision["stock"]["status"] == "not built"


def test_a_different_ptx_or_setting_is_a_miss() -> None:
    backend = CUDABackend(GPUTarget("cuda", 90, 32))
    options = backend.parse_options({"num_warps": 4})
    key = cubin_key(".version 8.0", 90, options)
    assert key == cubin_key(".version 8.0", 90, options)
    assert key != cubin_key(".version 8.1", 90, options)
    assert key != cubin_key(".version 8.0", 100, options)
    assert key != cubin_key(".version 8.0", 90, backend.parse_options({"num_warps": 8}))
    from triton import knobs

    with knobs.nvidia.scope():
        knobs.nvidia.disable_ptxas_opt = True
        assert key != cubin_key(".version 8.0", 90, options)


@pytest.mark.parametrize(
    ("strategy", "starts"), [("optimal", True), ("measured", True), ("none", False)]
)
def test_enable_starts_the_helper_for_strategies_that_build_in_it(
    isolated,  # noqa: F811
    monkeypatch,
    strategy,
    starts,
) -> None:
    started = []
    monkeypatch.setattr(lguard.guard(), "start", lambda: started.append(1))
    wst.enable(strategy, cache_dir=isolated / "c")
    wst.disable()
    assert bool(started) == starts
    started.clear()
    wst.enable(strategy, cache_dir=isolated / "c", lowering_timeout=None)
    wst.disable()
    assert started == []
    assert dropin._SOLVING  # the strategies warmed up


def test_reset_jit_caches_reaches_subclasses_and_autotuners() -> None:
    """enable()/disable() find kernels by their type's class set, not isinstance: a kernel of
    a JITFunction subclass and an autotuner's choices are forgotten all the same."""
    import triton
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    class Wrapped(JITFunction):
        pass

    def tiny(x_ptr):
        tl.store(x_ptr, 1.0)

    kernel = Wrapped(tiny)
    kernel_cache = {"key": object()}
    kernel.device_caches[0] = (kernel_cache, {}, None, None, None)
    tuner = triton.autotune(configs=[triton.Config({})], key=[])(triton.jit(tiny))
    tuner.cache[("key",)] = triton.Config({})
    assert dropin.reset_jit_caches() >= 2
    assert kernel_cache == {} and tuner.cache == {}

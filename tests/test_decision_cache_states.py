"""The decision check's hot-loop spill counts (where a spilling build's spill instructions
sit) are read only where two spilling builds are compared: from the cubin this process's
guard keeps, else from the guard's cache, else by building again and disassembling in the
child (dropin/builds.py). Every route gives the counts the child read when it read them for
every build. Built on the CPU (sm_90, Triton 3.6: ours spills 1,664 B)."""

from __future__ import annotations

import tempfile
from types import SimpleNamespace

import pytest

triton = pytest.importorskip("triton")

from triton.backends.compiler import GPUTarget  # noqa: E402

from corpus import configspace  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402
from corpus.dump import ast_source  # noqa: E402
from ws_solver.triton.dropin import builds  # noqa: E402
from ws_solver.triton.dropin import switch as dropin  # noqa: E402
from ws_solver.triton.dropin.decision_check import Candidate  # noqa: E402
from ws_solver.triton.guard import client as lguard  # noqa: E402
from ws_solver.triton.toolchain.binary_usage import cubin_loop_spills  # noqa: E402

pytestmark = [pytest.mark.triton, pytest.mark.slow, pytest.mark.triton36]

PROBE = lguard.LoweringGuard.probe  # unwrapped, whatever a test wraps it in
KERNEL, CONFIG = "gemm_tma", "t128x256x64_w4_s3"


@pytest.fixture(scope="module")
def ours() -> lguard.LoweringJob:
    """The job of ours' build in the decision check of a compile of the kernel."""
    from triton import knobs

    jobs: list = []

    def kept(self, job, timeout_s=60.0, cache_dir=None, function=None):
        jobs.append((function, job))
        return PROBE(self, job, timeout_s, cache_dir, function)

    configspace.register(configspace.space(KERNEL))
    config = corpus_kernels.load(KERNEL).CONFIGS[CONFIG]
    with (
        tempfile.TemporaryDirectory() as cache,
        knobs.cache.scope(),
        knobs.runtime.scope(),
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(lguard.LoweringGuard, "probe", kept)
        patch.setenv("WS_SOLVER_CACHE_DIR", f"{cache}/plans")
        knobs.cache.dir = f"{cache}/triton"
        knobs.runtime.add_stages_inspection_hook = None
        with dropin.partitioner("optimal", cache_dir=f"{cache}/c", parallel_builds=False):
            triton.compile(
                ast_source(KERNEL, config),
                target=GPUTarget("cuda", 90, 32),
                options=corpus_kernels.options(config),
            )
    return next(job for function, job in jobs if function == builds.BINARY_PROBE)


def _built(job: lguard.LoweringJob, where: str):
    settings = SimpleNamespace(lowering_timeout=120)
    compile_builds = builds.Builds(settings, 90, job.options, where, lambda text, reqs: job)
    return compile_builds.build(Candidate("optimal", job.text), job.registers)


def test_every_cache_state_reads_the_same_counts(ours, tmp_path, monkeypatch) -> None:
    asked: list[str] = []

    def counted(self, job, timeout_s=60.0, cache_dir=None, function=None):
        verdict = PROBE(self, job, timeout_s, cache_dir, function)
        asked.append(function.rsplit(":", 1)[-1] + (" cached" if verdict.cached else ""))
        return verdict

    monkeypatch.setattr(lguard.LoweringGuard, "probe", counted)
    fresh = lguard.LoweringGuard()
    monkeypatch.setattr(lguard, "_guard", fresh)
    try:
        built = _built(ours, str(tmp_path))
        assert built.spills and built.usage.loop_spills is None  # not read in the child
        (cubin,) = fresh._binaries.values()
        eager = cubin_loop_spills(cubin)  # what the child read of every build before
        built.read_hot_spills()  # from the cubin kept here: no probe
        assert built.usage.loop_spills == eager and asked == ["probe_binary"]

        # Another process, the verdicts on disk: the counts read then come from the cache.
        monkeypatch.setattr(lguard, "_guard", lguard.LoweringGuard())
        asked.clear()
        again = _built(ours, str(tmp_path))
        again.read_hot_spills()
        assert again.usage.loop_spills == eager and asked == ["probe_binary cached"]

        # Another process, the counts not cached, no cubin: built again, read in the child.
        for path in tmp_path.rglob("*.json"):
            if '"loop_spills"' in path.read_text():
                path.unlink()
        other = lguard.LoweringGuard()
        monkeypatch.setattr(lguard, "_guard", other)
        asked.clear()
        last = _built(ours, str(tmp_path))
        last.read_hot_spills()
        assert last.usage.loop_spills == eager
        assert asked == ["probe_binary cached", "probe_binary_sass"]
        other.shutdown()
    finally:
        fresh.shutdown()

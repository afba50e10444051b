"""The decision check's builds of one kernel compile, in the lowering guard's child (to ptxas):
ours and the other decisions (`probe_binary`), and stock Triton's (`probe_stock`).

- **Stock's build, started early.** On a target never measured every decision weighs stock's
  build: it starts before the plan is solved and runs beside it. On a measured target a rule
  asks for it only when ours fails or spills: where cores allow (`spare_core`), it starts
  beside ours all the same, *speculatively*, and is cancelled (its child killed, with its
  ptxas) when the compile ends without a rule asking for it. Whether it ran changes nothing
  the compile records or builds: the report says `not built` wherever no rule asked, as
  without it; a build that finished unasked leaves only its verdict in the guard's cache,
  the verdict a later ask would have made. ``enable(parallel_builds=False)`` or
  ``WS_SOLVER_PARALLEL_BUILDS=0``: never speculatively.
- **The heuristic's plan, built beside the solve.** `optimal` keeps the heuristic's plan
  unless the model gains more than its error (all 42 sm_90 configs of the config space's CI
  slice): where cores allow, that plan's build starts before CP-SAT does (`speculate`), and
  the build of `optimal`'s plan, the same job, finds it under way (the guard runs one probe
  per key); a plan that differs leaves it to be cancelled with the others.
- **Hot-loop spill counts, where they decide.** Where a build's spill instructions sit
  (`sass_loops`, from nvdisasm's SASS, ~0.4 s a cubin) orders two builds that both spill and
  nothing else (`BinaryUsage.worse_than`, `relieved_by`); the child does not read them. A
  `Built` that spills carries a reader (`Built.sass`) that the decision check calls where it
  compares two spilling builds: from this process's copy of the build's cubin
  (`client.assembled`), else from the guard's cache, else by a probe that builds it again
  and disassembles it in the child (`*_sass` probes); what it read is cached as that probe's
  verdict, so every cache state gives the same counts.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from ..guard import client as lguard
from ..toolchain.binary_usage import UsageUnavailable, cubin_loop_spills
from ..toolchain.sass_loops import LoopSpills
from .decision_check import Built, Candidate

# Stock's builds run here while the compiling thread partitions (a few at once: compiles of
# several threads, e.g. Inductor's, each wait for their own).
_BUILDS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ws_solver-stock")
BINARY_PROBE = "ws_solver.triton.guard.server:probe_binary"
STOCK_PROBE = "ws_solver.triton.guard.server:probe_stock"
# The probes that also disassemble their cubin (the hot-loop counts' last route).
SASS_PROBES = {
    BINARY_PROBE: "ws_solver.triton.guard.server:probe_binary_sass",
    STOCK_PROBE: "ws_solver.triton.guard.server:probe_stock_sass",
}


def spare_core() -> bool:
    """Whether a speculative build would find a core of its own: two usable cores at least,
    and the last minute's load average leaving one idle (this compile's own work counts in
    it, hence half a core of slack)."""
    cores = lguard.usable_cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: the cores decide
        return True
    return load < cores - 0.5


class Builds:
    """One compile's decision-check builds (see the module docstring)."""

    def __init__(
        self,
        settings: Any,
        capability: int,
        options: Any,
        cache_dir: str,
        lowering_job: Callable[[str, Any], lguard.LoweringJob],
        binary_probe: str = BINARY_PROBE,
    ) -> None:
        self.settings = settings
        self.capability = capability
        self.options = options
        self.where = os.path.join(cache_dir, "lowering-probes")
        self.lowering_job = lowering_job  # (annotated text, register requests) -> job
        self.binary_probe = binary_probe
        self.verdicts: dict[str, lguard.Verdict] = {}  # ours and the others', by text
        self.ttir: str | None = None  # the kernel's TTIR, for stock Triton's build
        self.stock_job: lguard.LoweringJob | None = None  # stock's, once built
        self.stock_verdict: lguard.Verdict | None = None
        self._stock_future: Future | None = None
        self._speculative = False  # started without a rule asking (a measured target)
        self._stock_asked = False
        # Builds of the other decision started before a rule asked (by probe key: the
        # verdict once there), those asked for since, and whether the compile moved on.
        self._lock = threading.Lock()
        self._speculated: dict[str, lguard.Verdict | None] = {}
        self._asked: set[str] = set()
        self._closed = False
        self._running: list[Future] = []  # the speculative builds' threads (drop waits for them)

    @property
    def timeout(self) -> float:
        return self.settings.lowering_timeout or lguard.DEFAULT_TIMEOUT_S

    def build(self, candidate: Candidate, requests: Any) -> Built:
        """The candidate built to ptxas in the guard's child (probe_binary); the build
        `speculate` started, where it did (its verdict, as if probed now)."""
        job = self.lowering_job(candidate.annotated, requests)
        key = job.key(self.binary_probe)
        with self._lock:
            self._asked.add(key)
        verdict = lguard.guard().probe(job, self.timeout, self.where, self.binary_probe)
        with self._lock:
            speculated = self._speculated.get(key)
        if verdict.cached and speculated is not None:
            verdict = speculated
        self.verdicts[candidate.annotated] = verdict  # the lowering's verdict too (_probe)
        return self._read_later(Built.from_verdict(verdict), job, self.binary_probe, verdict)

    def start_stock(
        self, speculative: bool = False, then: Callable[[Built], None] | None = None
    ) -> None:
        """Build stock's kernel in the guard's child, in a thread of its own: the child runs
        while this process partitions and builds ours (`stock` waits for it); ``then`` is
        called with what it built (it may `speculate`)."""
        if self._stock_future is None and self.ttir is not None:
            self._speculative = speculative
            self._stock_future = _BUILDS.submit(self._stock_then, then)
            with self._lock:
                self._running.append(self._stock_future)

    def _stock_then(self, then: Callable[[Built], None] | None) -> Built:
        built = self._stock_build()
        if then is not None and not self._closed:
            with contextlib.suppress(Exception):  # a guess: `build` does it right if asked
                then(built)
        return built

    def speculate(self, candidate: Callable[[], Candidate], requests: Callable) -> None:
        """Build ``candidate()`` (the other decision) beside ours before a rule asks for it,
        where stock's build says a rule may: cancelled when none does (`drop_speculation`)."""
        with self._lock:
            if not self._closed:
                self._running.append(_BUILDS.submit(self._speculative_build, candidate, requests))

    def _speculative_build(self, make: Callable[[], Candidate], requests: Callable) -> None:
        candidate = make()
        job = self.lowering_job(candidate.annotated, requests(candidate))
        key = job.key(self.binary_probe)
        with self._lock:
            if self._closed or key in self._speculated:
                return
            self._speculated[key] = None
        verdict = lguard.guard().probe(job, self.timeout, self.where, self.binary_probe)
        if verdict.status != lguard.CANCELLED:
            with self._lock:
                self._speculated[key] = verdict

    def stock(self) -> Built:
        """What stock Triton builds of this kernel (started by `start_stock`, or now)."""
        self._stock_asked = True
        if self._stock_future is None:
            return self._stock_build()
        return self._stock_future.result()

    def drop_speculation(self) -> None:
        """The builds started speculatively where no rule asked for them cancelled (their
        children killed), and their threads waited for: nothing of this compile runs on, or
        writes to its cache folder, once its stage has returned (a benchmark removing that
        folder met a verdict written into it). One that finished stays in the guard's cache."""
        with self._lock:
            self._closed = True
            unasked = [k for k, v in self._speculated.items() if v is None and k not in self._asked]
            running, self._running = self._running, []
        for key in unasked:
            lguard.guard().cancel(key)
        future, self._stock_future = self._stock_future, None
        if future is not None and self._speculative and not self._stock_asked:
            job = self._stock_job()
            if job is not None and not future.done():
                lguard.guard().cancel(job.key(STOCK_PROBE))
        # A cancelled build answers at once; one that started after the cancel runs its course.
        wait(running, timeout=self.timeout)

    def _stock_job(self) -> lguard.LoweringJob | None:
        if self.ttir is None:
            return None
        return lguard.LoweringJob(
            text=self.ttir,
            capability=self.capability,
            options=self.options,
            num_warps=self.options.num_warps,
            registers=(),
            apply_registers=False,
            hopper=False,
        )

    def _stock_build(self) -> Built:
        """What stock Triton builds of this kernel (probe_stock on its TTIR)."""
        job = self._stock_job()
        if job is None:
            return Built("unavailable", reason="no TTIR")
        verdict = lguard.guard().probe(job, self.timeout, self.where, STOCK_PROBE)
        if verdict.status != lguard.CANCELLED:
            self.stock_job, self.stock_verdict = job, verdict  # its lowering (_stock_ttgir)
        return self._read_later(Built.from_verdict(verdict), job, STOCK_PROBE, verdict)

    def _read_later(
        self, built: Built, job: lguard.LoweringJob, function: str, verdict: lguard.Verdict
    ) -> Built:
        """``built`` with the reader of its hot-loop counts, where it spills."""
        if built.spills:
            cubin_key = verdict.facts.get("cubin_key") if verdict.facts else None
            built.sass = lambda: self._loop_spills(job, function, cubin_key)
        return built

    def _loop_spills(
        self, job: lguard.LoweringJob, function: str, cubin_key: Any
    ) -> LoopSpills | None:
        """Where the build's spill instructions sit (None: the SASS could not be read)."""
        sass = SASS_PROBES.get(function)
        if sass is None:  # a stand-in probe (tests): nothing to disassemble
            return None
        guard = lguard.guard()
        key = job.key(sass)
        verdict = guard.known(key, self.where)
        if verdict is None:
            cubin = guard.assembled(cubin_key) if isinstance(cubin_key, str) else None
            if cubin is not None:
                try:
                    read: dict | None = cubin_loop_spills(cubin).to_dict()
                except UsageUnavailable:
                    read = None
                verdict = lguard.Verdict("ok", facts={"loop_spills": read})
                guard.remember(key, verdict, self.where)
            else:  # the cubin is not here (evicted, or the verdict was another process's)
                verdict = guard.probe(job, self.timeout, self.where, sass)
        spills = verdict.facts.get("loop_spills") if verdict.ok and verdict.facts else None
        return LoopSpills(**spills) if isinstance(spills, dict) else None

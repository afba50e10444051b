"""One kernel compile through the drop-in: the stages hook ``enable()`` installs, the
replacement ``ttgir`` stage with its fallback chain, and the PTX/cubin observers."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
import warnings
from dataclasses import replace
from typing import Any

from ...core import envvars
from ...core.strategy import Explore, Strategy
from ...model.target import Target, target_for
from ...pipeline.partition import LoopReport, SolveOptions, partition_text
from ..guard import client as lguard
from ..rewrites import chain as rewrites
from ..rewrites.chain import PostFacts, PostPipeline, RegisterRequests, final_ptx, post_pipeline
from ..toolchain import make_ttgir as tpipe
from ..toolchain import versions
from ..toolchain.binary_usage import cubin_key
from ..toolchain.reasons import failure_reason
from ..toolchain.unlaunchable import TensorMemoryOverflow, tensor_memory_overflow
from . import builds as decision_builds
from . import dump, handover, records
from . import session as sessions
from .captured import captured_stderr
from .deadline import call_with_deadline
from .decision_check import Built, Candidate, settle
from .planner_input import PlannerInput
from .session import STOCK, CompileReport, Session, WSFallbackWarning, fallbacks_for, lock

# What a stock or measured compile's report says (measured times its builds at a launch;
# a compile outside JITFunction.run, e.g. Inductor's, has none to time).
_STOCK_NOTES = {
    Strategy.STOCK: "stock: Triton's own kernel, as asked",
    Strategy.MEASURED: (
        "measured, no launch to time (a compile outside a @triton.jit launch, e.g. by "
        "triton.compile or Inductor): stock's kernel, where stock builds it"
    ),
}
_SETMAXNREG = re.compile(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)")
BINARY_PROBE = decision_builds.BINARY_PROBE
STOCK_PROBE = decision_builds.STOCK_PROBE


class KernelCompile:
    """One kernel compile: the replacement ttgir stage and the PTX observer."""

    def __init__(self, session: Session, stages: dict, options: Any, capability: int) -> None:
        self.session = session
        self.settings = session.settings
        self.stages = stages  # as Triton will call them, once every hook has run
        self.stock_ttgir = stages["ttgir"]
        self.stock_llir = stages.get("llir")
        self.stock_ptx = stages.get("ptx")
        self.stock_cubin = stages.get("cubin")
        self.unreleased_ptx: str | None = None  # the PTX before wgrelease rewrote it
        self.options = options
        self.capability = capability
        self.report: CompileReport | None = None
        self.release_ring_depth: int | None = None  # set when a specialized module lowered
        self.ttir: str | None = None  # the kernel's TTIR, for stock Triton's build
        # The decision check's builds (ours by text, stock's), in the guard's child.
        self.builds = decision_builds.Builds(
            self.settings, capability, options, session.cache_dir, self._lowering_job, BINARY_PROBE
        )
        self._flips: dict[str, Candidate] = {}  # the other decision, by candidate text
        self._flips_lock = threading.Lock()
        self.triton_hash: str | None = None  # Triton's cache key of this compile
        self.logged = False  # the report is in the compile log (session.report_file)
        self.part_text: str | None = None  # the planner's input (for dump_dir)
        self.planner_input = PlannerInput(None)  # and its one parse
        self.annotated: str | None = None  # what the kept attempt handed to Triton
        self.handed: lguard.Lowering | None = None  # the child's lowering the stages take

    # ttgir ---------------------------------------------------------------------------------
    def ttgir(self, mod: Any, metadata: dict) -> Any:
        try:
            return self._ttgir(mod, metadata)
        finally:  # stock's build, started speculatively, where no rule asked for it
            self.builds.drop_speculation()

    def _ttgir(self, mod: Any, metadata: dict) -> Any:
        ttir = mod.str()
        self.ttir = self.builds.ttir = ttir
        if not records.WS_LOOP.search(ttir):
            return self.stock_ttgir(mod, metadata)  # exactly what Triton would do
        self.triton_hash = metadata.get("hash")
        kernel = records.kernel_name(ttir)
        pattern = self.settings.skipped_by(kernel)
        if pattern is not None:
            self._skipped(kernel, metadata, f"skipped: the kernel matches skip pattern {pattern!r}")
            return self.stock_ttgir(mod, metadata)
        if self.settings.strategy == Strategy.STOCK:
            self._skipped(kernel, metadata, _STOCK_NOTES[Strategy.STOCK])
            return self.stock_ttgir(mod, metadata)
        context = mod.context
        chain = fallbacks_for(self.settings.strategy)
        stock_failed = ""
        if self.settings.strategy == Strategy.MEASURED:  # a compile outside a launch
            try:
                with captured_stderr() as err:
                    result = self.stock_ttgir(tpipe.parse_module_text(ttir, context), metadata)
            except Exception as e:  # stock fails on it: optimal's kernel, with its fallbacks
                stock_failed = failure_reason(e, err.text)
                mod, chain = tpipe.parse_module_text(ttir, context), fallbacks_for(Strategy.OPTIMAL)
            else:
                self._skipped(kernel, metadata, _STOCK_NOTES[Strategy.MEASURED])
                return result
        start = time.perf_counter()
        report = CompileReport(kernel, self.capability, self.settings.strategy)
        self.report = report
        if stock_failed:
            report.notes.append(f"measured, no launch to time: stock failed ({stock_failed})")
        if self.settings.lowering_timeout and self.settings.strategy != Strategy.NONE:
            lguard.guard().start()  # Triton's import in the helper overlaps partitioning
        result = None
        try:
            with captured_stderr() as err, sessions.timed(report, "partition point"):
                tpipe.run_until_partition(mod, self.options, self.capability)
            err.replay()
            part_text = mod.str()
        except Exception as e:
            report.fallbacks.append(records.failure("partition point", [], e, err.text, 0.0))
            part_text = None
        self.part_text = part_text
        self.planner_input = PlannerInput(part_text)
        sites = self.planner_input.sites
        if part_text is not None:
            if chain and self._checks_decision(chain[0]) and not self._target().measured:
                # Stock's decision weighs on an unmeasured target: its build runs in the
                # guard's child while we partition (on a measured one only a spill or a
                # failure of ours asks for it, decision_check.settle; see _choose).
                self.builds.start_stock()
            for strategy in chain:
                result = self._attempt(strategy, part_text, context, metadata, sites)
                if result is not None:
                    break
        if result is None:
            report.strategy_used = STOCK
            try:
                result = self.stock_ttgir(tpipe.parse_module_text(ttir, context), metadata)
            except BaseException:
                self._finish(start, metadata)
                self._log()
                raise
            self._finish(start, metadata)
            return result
        self._finish(start, metadata)
        return result

    def _attempt(
        self,
        strategy: Strategy | Explore,
        part_text: str,
        context: Any,
        metadata: dict,
        sites: list[dict],
    ) -> Any:
        """Compile ``part_text`` with ``strategy``; the module on success, None on failure."""
        report = self.report
        assert report is not None
        start = time.perf_counter()
        loop_reports: list[LoopReport] = []
        post = None
        err = None
        chosen = None
        try:
            with captured_stderr() as err:
                chosen = self._choose(strategy, part_text, len(sites))
                loop_reports = chosen.loop_reports
                if chosen.stock:  # the decision check kept stock Triton's own kernel
                    return self._stock_kept(self._stock_ttgir(context, metadata), sites)
                requests = records.register_requests(loop_reports)
                # An unspecialized module is the input minus its tags, lowered as Triton would;
                # on sm_100 it is probed too: its tensor memory can overflow the SM's (a
                # persistent 128x256 GEMM's does, where stock's specialized kernel fits), and
                # then stock's kernel is the fallback, not an error at the PTX stage.
                if chosen.specialized or self.capability >= 100:
                    self._probe(strategy, chosen.annotated, requests)
                post, result = self._lower(chosen.annotated, requests, context, metadata)
        except Exception as e:
            where = records.failed_loops(e, loop_reports, sites)
            elapsed = time.perf_counter() - start
            report.fallbacks.append(
                records.failure(strategy, where, e, err.text if err else "", elapsed)
            )
            return None
        assert post is not None and chosen is not None
        self.annotated = chosen.annotated
        # What MLIR printed during an attempt that succeeded (a pass's diagnostic it recovered
        # from) belongs to the report, not to the user's terminal: stock Triton prints nothing.
        if err.text:
            report.notes.append(
                f"diagnostics of the {strategy} attempt: {records.first_line(err.text)}"
            )
        if "hopper" in post.missing:
            self.session.warn_once("hopper", records.HOPPER_UNAVAILABLE)
        # The decision check may have kept another strategy's plan (report.decision says why).
        used = strategy if chosen.label == str(strategy) else Strategy(chosen.strategy)
        report.strategy_used = used
        self.release_ring_depth = post.ring_depth
        report.lowered = post.lowered
        report.notes.extend(post.notes)
        report.loops = records.loop_records(used, loop_reports, sites, post.registers_applied)
        report.notes.extend(records.plan_cache_notes(loop_reports))
        return result

    def _stock_kept(self, result: Any, sites: list[dict]) -> Any:
        """Stock Triton's make_ttgir on the kernel's TTIR (the binary stock builds), kept by
        the decision check: the report says so (its record says why)."""
        report = self.report
        assert report is not None
        report.strategy_used = STOCK
        report.loops = [{**s, "strategy": STOCK} for s in sites]
        return result

    def _choose(self, strategy: Strategy | Explore, part_text: str, loops: int) -> Candidate:
        """The strategy's plan, then (optimal and heuristic) the decision check."""
        if strategy == Strategy.TRITON:  # Triton's partitioner decides, in the lowering
            return Candidate(str(strategy), part_text, [], True, triton_decides=True)
        speculating = self.settings.parallel_builds and decision_builds.spare_core()
        # Where the target is not measured, stock's build already runs beside the solve.
        guessing = strategy == Strategy.OPTIMAL and self._target().measured
        if speculating and guessing and self._checks_decision(strategy):
            self._guess(part_text, loops)
        annotated, loop_reports = self._partition(strategy, part_text, loops)
        records.check_solver_status(loop_reports)
        # Only annotations added, or the tag taken off; else UntrustedResult.
        specialized = any(self.planner_input.check(annotated, loop_reports))
        ours = Candidate(str(strategy), annotated, loop_reports, specialized)
        if not self._checks_decision(strategy):
            return ours
        if speculating:
            # On a measured target stock's build starts beside ours all the same, now that the
            # solver's done (it would take the cores the solve uses), and the other decision's
            # once stock's says a rule may ask for it: used only where a rule asks, cancelled
            # at the end of the stage else (builds.py).
            self.builds.start_stock(
                speculative=True, then=lambda built: self._speculate(ours, built, part_text, loops)
            )
        with sessions.timed(self.report, "decision check"):
            settled = settle(
                ours,
                self._target(),
                lambda c: self._flip(c, part_text, loops),
                lambda c: self.builds.build(c, records.register_requests(c.loop_reports)),
                self.builds.stock,
                lambda: Candidate(str(Strategy.TRITON), part_text, [], True, triton_decides=True),
            )
        assert self.report is not None
        self.report.decision = settled.record
        return settled.candidate

    def _guess(self, part_text: str, loops: int) -> None:
        """The heuristic's plan built beside the solve: `optimal` keeps it unless the model
        gains more than its error (on all 42 sm_90 configs of the CI slice), and its build
        then finds this one under way (the guard's one probe per key); else it is cancelled
        with the other speculative builds (builds.py)."""
        try:
            text, reports = self._partition(Strategy.HEURISTIC, part_text, loops)
        except Exception:  # only a guess: the compile plans as it would have
            return
        guess = Candidate(str(Strategy.HEURISTIC), text, reports)
        self.builds.speculate(lambda: guess, lambda c: records.register_requests(c.loop_reports))

    def _checks_decision(self, strategy: Strategy | Explore) -> bool:
        return bool(
            self.settings.check_decision
            and self.settings.lowering_timeout
            and strategy in (Strategy.OPTIMAL, Strategy.HEURISTIC)
        )

    def _target(self) -> Target:
        return target_for(self.capability, versions.installed().name)

    def _speculate(self, ours: Candidate, stock: Built, part_text: str, loops: int) -> None:
        """The other decision's build started beside ours where stock's build says a rule
        may ask for it: a spill of ours would not give way to stock's kernel (it failed, or
        it spills too)."""
        if stock.ok and not stock.spills:
            return
        built = self.builds.verdicts.get(ours.annotated)
        if built is not None and not Built.from_verdict(built).spills:
            return  # ours is built, and nothing asks for the other
        self.builds.speculate(
            lambda: self._flip(ours, part_text, loops),
            lambda c: records.register_requests(c.loop_reports),
        )

    def _flip(self, candidate: Candidate, part_text: str, loops: int) -> Candidate:
        """The other decision (`_flip_now`), once per candidate (a speculative build and the
        decision check may both ask)."""
        with self._flips_lock:
            if candidate.annotated not in self._flips:
                self._flips[candidate.annotated] = self._flip_now(candidate, part_text, loops)
            return self._flips[candidate.annotated]

    def _flip_now(self, candidate: Candidate, part_text: str, loops: int) -> Candidate:
        """The other decision: unspecialized for a specialized candidate; else the
        heuristic's plan forced to specialize, else Triton's own partitioner."""
        if candidate.specialized:
            text, reports = self._partition(Strategy.NONE, part_text, loops)
            return Candidate("unspecialized", text, reports, False)
        forced = replace(self.settings.solve, force=True)
        text, reports = self._partition(Strategy.HEURISTIC, part_text, loops, forced)
        if any(r.specialized for r in reports):
            return Candidate("heuristic, forced", text, reports, True)
        return Candidate(str(Strategy.TRITON), part_text, [], True, triton_decides=True)

    def _partition(
        self,
        strategy: Strategy | Explore,
        part_text: str,
        loops: int,
        options: SolveOptions | None = None,
    ) -> tuple[str, list[LoopReport]]:
        """``partition_text`` under the settings' wall-clock limit (DeadlineExceeded)."""
        kwargs = {"options": options or self.settings.solve, "triton": versions.installed().name}
        # Planning annotates the lent module: see PlannerInput.
        with self.planner_input.lent() as module, sessions.timed(self.report, "planning"):
            return call_with_deadline(
                lambda: partition_text(part_text, strategy, module=module, **kwargs),
                self.settings.partition_limit(loops, strategy),
                f"partitioning ({strategy})",
            )

    def _lower(
        self, annotated: str, requests: RegisterRequests, context: Any, metadata: dict
    ) -> tuple[PostFacts, Any]:
        """The rest of make_ttgir on ``annotated``: the guard child's lowering of it where
        `handover.taken` allows (then its text, which the llir stage knows), else here."""
        job = self._lowering_job(annotated, requests)
        lowering = self._handed_over(job, BINARY_PROBE, self.builds.verdicts.get(annotated))
        if lowering is not None and lowering.post is not None:
            return lowering.post, self._take(lowering, metadata)
        post = self._post_pipeline(requests)
        module = tpipe.parse_module_text(annotated, context, job.located)
        module = tpipe.run_after_partition(
            module, self.options, self.capability, metadata, post_pipeline=post
        )
        return post.facts(), module

    def _stock_ttgir(self, context: Any, metadata: dict) -> Any:
        """Stock Triton's make_ttgir on the kernel's TTIR: the guard child's where
        `handover.taken` allows, else here."""
        job, verdict = self.builds.stock_job, self.builds.stock_verdict
        lowering = self._handed_over(job, STOCK_PROBE, verdict) if job is not None else None
        if lowering is not None:
            return self._take(lowering, metadata)
        return self.stock_ttgir(tpipe.parse_module_text(self.ttir or "", context), metadata)

    def _handed_over(
        self, job: lguard.LoweringJob, function: str, verdict: Any
    ) -> lguard.Lowering | None:
        """The child's lowering of ``job``, where the stages may take it."""
        own = all(self.stages.get(n) == getattr(self, n) for n in ("ttgir", "llir", "ptx"))
        return handover.taken(lguard.guard().lowered(job.key(function)), verdict, own)

    def _take(self, lowering: lguard.Lowering, metadata: dict) -> str:
        """The ttgir stage's result: the child's TTGIR text (the llir stage knows it), with
        the metadata its stage set."""
        metadata.update(lowering.ttgir_metadata)
        self.handed = lowering
        return lowering.ttgir

    def _post_pipeline(self, requests: RegisterRequests) -> PostPipeline:
        """The rewrites run after pipeline/optimize_partition_warps (``rewrites.post_pipeline``)."""
        return post_pipeline(
            self.capability,
            self.options.num_warps,
            requests,
            self.settings.apply_registers,
            self.settings.overlap_wgmma,
            rewrites.hopper_fix() if self.capability // 10 == 9 else None,
            self.settings.release_per_warp_group,
            getattr(self.options, "num_stages", None),
        )

    def _probe(
        self, strategy: Strategy | Explore, annotated: str, requests: RegisterRequests
    ) -> None:
        """Lower ``annotated`` in the guard's child process first; raise LoweringRejected
        when that hangs, crashes or fails (the attempt then falls back without touching
        this process). An unavailable guard lets the attempt go on unguarded."""
        timeout = self.settings.lowering_timeout
        if not timeout:
            return
        job = self._lowering_job(annotated, requests)
        where = os.path.join(self.session.cache_dir, "lowering-probes")
        # With the decision check on, its build to ptxas was the probe (one child run). A plan
        # of rank K > 0 goes to ptxas too: ptxas can reject one for its registers (explore:1 of
        # gemm_persistent t128x256x64 relu w8 s2, 128 of the 154 one instruction needs), and
        # that should fall back like a lowering failure, not stop the compile.
        verdict = self.builds.verdicts.get(annotated)
        if verdict is None:
            to_ptxas = self._checks_decision(strategy) or isinstance(strategy, Explore)
            function = BINARY_PROBE if to_ptxas else None
            verdict = lguard.guard().probe(job, timeout, cache_dir=where, function=function)
        report = self.report
        assert report is not None
        report.probes.append({"strategy": strategy, **verdict.summary()})
        if verdict.ok:
            return
        if not verdict.usable:
            report.notes.append(f"lowering not guarded: {verdict.reason}")
            self.session.warn_once(
                "guard",
                f"ws_solver: {verdict.reason}; partitioned kernels are lowered in this process "
                "without a time limit (see docs/dropin.md)",
            )
            return
        raise records.LoweringRejected(verdict)

    def _lowering_job(self, annotated: str, requests: RegisterRequests) -> lguard.LoweringJob:
        return lguard.LoweringJob(
            text=annotated,
            capability=self.capability,
            options=self.options,
            num_warps=self.options.num_warps,
            registers=requests,
            apply_registers=self.settings.apply_registers,
            overlap=self.settings.overlap_wgmma,
            release_per_warp_group=self.settings.release_per_warp_group,
            take_turns=self.settings.take_turns,
            hopper=self.capability // 10 == 9 and rewrites.hopper_fix() is not None,
            located=annotated in self.planner_input.located,
        )

    def _skipped(self, kernel: str, metadata: dict, note: str) -> None:
        """A kernel left to stock Triton (``skip``, or the stock strategy): reported as stock
        Triton's, left alone after that."""
        report = CompileReport(kernel, self.capability, self.settings.strategy, STOCK)
        report.notes.append(note)
        with lock:
            self.session.reports.append(report)
        metadata["ws_solver"] = report.to_dict()
        self._log(report)

    def _log(self, report: CompileReport | None = None) -> None:
        """Append the report to the compile log, once (and print its line under
        ``WS_SOLVER_LOG=1``)."""
        report = report or self.report
        if not self.logged and report is not None:
            self.logged = True
            self.session.log(report, self.triton_hash)
            if envvars.logging():
                print(report.log_line(), file=sys.stderr, flush=True)

    def _finish(self, start: float, metadata: dict) -> None:
        report = self.report
        assert report is not None
        report.wall_s = round(time.perf_counter() - start, 4)
        with lock:
            self.session.reports.append(report)
        if self.settings.dump_dir and self.part_text is not None:
            try:
                dump.write(
                    self.settings.dump_dir, report, self.triton_hash, self.part_text, self.annotated
                )
            except OSError as e:
                report.notes.append(f"dump_dir: not written ({e.strerror or e})")
        metadata["ws_solver"] = report.to_dict()
        if report.fallbacks:
            warnings.warn(records.fallback_message(report), WSFallbackWarning, stacklevel=2)

    # llir and ptx ----------------------------------------------------------------------------
    def llir(self, src: Any, metadata: dict) -> Any:
        """Triton's make_llir; the child's LLVM IR for the text `_lower` handed on."""
        handed = self.handed
        if handed is not None and src is handed.ttgir:
            metadata.update(handed.llir_metadata)
            return handed.llir
        assert self.stock_llir is not None
        return self.stock_llir(src, metadata)

    def _triton_ptx(self, src: Any, metadata: dict) -> Any:
        """Triton's make_ptx; the child's PTX for the LLVM IR `llir` handed on."""
        handed = self.handed
        if handed is not None and src is handed.llir:
            metadata.update(handed.ptx_metadata)
            assert self.report is not None
            self.report.notes.append(handover.LOWERED_ONCE)
            return handed.ptx
        assert self.stock_ptx is not None
        return self.stock_ptx(src, metadata)

    def _wants_release(self) -> bool:
        """Per-warp-group release asked for, on sm_90, and the module was specialized."""
        return bool(
            self.settings.release_per_warp_group
            and self.capability // 10 == 9
            and self.report is not None
            and self.report.lowered
        )

    def ptx(self, src: Any, metadata: dict) -> Any:
        try:
            return self._ptx(src, metadata)
        except BaseException:
            self._log()
            raise

    def _ptx(self, src: Any, metadata: dict) -> Any:
        out = self._triton_ptx(src, metadata)
        if self.report is not None:
            self._check_tensor_memory(metadata)
        if self.report is not None and isinstance(out, str) and self._wants_release():
            handed = self.handed if self.handed is not None and out is self.handed.ptx else None
            final = (handed and handed.final) or final_ptx(
                out, self.options.num_warps, self.release_ring_depth, self.settings.take_turns
            )
            self.report.notes.extend(final.notes)
            self.unreleased_ptx, out = final.unreleased, final.ptx
        if self.report is not None and isinstance(out, str):
            self.report.setmaxnreg = sorted({int(v) for _, v in _SETMAXNREG.findall(out)})
            metadata["ws_solver"] = self.report.to_dict()
        return out

    def _check_tensor_memory(self, metadata: dict) -> None:
        """Refuse a kernel that needs more TMEM than the SM has: Triton compiles it without an
        error and it traps at launch. The guard already failed such specialized modules, so
        the kernel that got here is the last fallback: no partitioning avoids it."""
        why = tensor_memory_overflow(metadata)
        if why:
            assert self.report is not None
            raise TensorMemoryOverflow(
                f"ws_solver: kernel {self.report.kernel} on sm_{self.capability} "
                f"(Triton {versions.installed().name}): {why}; lower num_stages or the tile "
                "sizes"
            )

    def cubin(self, src: Any, metadata: dict) -> Any:
        """ptxas; if it rejects the PTX wgrelease rewrote, assemble the PTX as Triton wrote it
        (a compile never breaks on the rewrite)."""
        try:
            return self._cubin(src, metadata)
        finally:
            self._log()

    def _cubin(self, src: Any, metadata: dict) -> Any:
        try:
            return self._assemble(src, metadata)
        except Exception as e:
            if self.unreleased_ptx is None:
                raise
            assert self.report is not None
            self.report.notes.append(
                f"per-warp-group release undone: ptxas rejected it ({failure_reason(e, '')})"
            )
            metadata["ws_solver"] = self.report.to_dict()
            return self._assemble(self.unreleased_ptx, metadata)

    def _assemble(self, ptx: Any, metadata: dict) -> Any:
        """ptxas on ``ptx``, unless the decision check's build already assembled this very
        PTX (same options, knobs and ptxas): then its cubin (issue 49: ptxas runs once)."""
        assert self.stock_cubin is not None
        reused = None
        if self.report is not None and isinstance(ptx, str):
            try:
                reused = lguard.guard().assembled(cubin_key(ptx, self.capability, self.options))
            except Exception:  # a key that cannot be computed: ptxas runs as usual
                reused = None
        if reused is None:
            return self.stock_cubin(ptx, metadata)
        assert self.report is not None
        self.report.notes.append("ptxas run once: the decision check's cubin of this PTX")
        metadata["ws_solver"] = self.report.to_dict()
        return reused

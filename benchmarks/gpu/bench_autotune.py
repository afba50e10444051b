"""The ``autotune`` strategy of bench_kernels: what ``ws_solver.triton.autotune`` picks for
each config's own launch on this GPU, as a row verified and timed like the others.

Per config: the launch's spec is read from Triton's JIT at the bench size (a warmup whose
``jit_cache_hook`` declines the compile), and a helper process builds the autotuner's
reference and every candidate from it into the drop-in's Triton caches
(``benchmarks.common.autotune_warm``), many configs at once, the other strategies' compiles
queued behind them. Config by config, as its builds are ready, the real autotuner (the given
candidates, by default its own; no on-disk choices) then tunes that launch: it loads the
builds, checks each against the unspecialized reference, times the distinct binaries in its
interleaved rounds and keeps the fastest. The winner's kernel is the row's: bench_gpu verifies
it (``verify_gpu``) and times it in the same balanced rounds as stock's and the others'. Its
compile record (``tuned_record``) holds the tuning report (candidates, times, discards,
winner), the warm pass and the winner's binary.

With ``--dry-run`` (no GPU) the builds are compiled from the corpus's specs instead and the
records say what the warm pass took per config; nothing is tuned.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.common.autotune_warm import spec_from_corpus, spec_from_jit, warm_in_subprocess
from benchmarks.common.bench_compile import (
    Job,
    compile_in_subprocess,
    compile_order,
    describe,
    dropin_summary,
    first_error_line,
)
from benchmarks.common.bench_strategies import TUNED
from benchmarks.gpu.bench_gpu import BENCH, mark_progress
from corpus import kernels as corpus_kernels
from ws_solver.cli.tune import standing_in
from ws_solver.core.candidates import DEFAULT_CANDIDATES, expand

SEED = 1234  # bench_gpu.bench_kernel's inputs: the launch that is timed is the one tuned


@dataclass(frozen=True)
class TuneSettings:
    """The autotuner's arguments: its candidates, timing rounds and do_bench warmup/rep (ms);
    the defaults are ``ws_solver.triton.autotune``'s."""

    candidates: tuple[str, ...] = DEFAULT_CANDIDATES
    rounds: int = 3
    warmup_ms: float = 25.0
    rep_ms: float = 100.0

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TuneSettings:
        names = tuple(c for c in args.autotune_candidates.split(",") if c)
        return cls(names, args.autotune_rounds, cls.warmup_ms, args.autotune_rep_ms)

    def check(self) -> None:
        """ValueError naming what the autotuner would refuse."""
        expand(self.candidates)
        if self.rounds < 1 or self.rep_ms <= 0:
            raise ValueError(f"autotune rounds {self.rounds} and rep {self.rep_ms} ms must be > 0")

    def to_dict(self) -> dict:
        return {**asdict(self), "candidates": list(self.candidates)}


# -- the run: warm, compile, tune ---------------------------------------------------------------
def compile_and_tune(
    rows: list[dict], cache_root: Path, args: argparse.Namespace, save: Any
) -> tuple[dict[tuple[str, str], Any], list[str]]:
    """Fill every row's compile record: the autotune rows' by warming and (not --dry-run)
    tuning, the others' by compiling their job in a helper, queued behind the warm passes.
    Returns the tuned kernels by (job, "kernel"), as bench_gpu.verify_all keeps kernels, and
    the configs left out at --autotune-stop-after (their rows are taken out of `rows`)."""
    settings = TuneSettings.from_args(args)
    tuned_rows = tuning_order([r for r in rows if r["strategy"] in TUNED])
    cache_dir = str((cache_root / "autotune").resolve())
    helpers = max(1, args.parallel - (0 if args.dry_run else 1))  # one core tunes
    kernels: dict[tuple[str, str], Any] = {}
    print(
        f"autotune: warming {len(tuned_rows)} configs' builds ({helpers} at a time), then "
        f"{'nothing tuned (dry run)' if args.dry_run else 'tuning each on the GPU'}; "
        f"candidates {','.join(settings.candidates)}",
        flush=True,
    )
    start = time.perf_counter()
    stop_at = start + args.autotune_stop_after if args.autotune_stop_after else None
    pool = ThreadPoolExecutor(max_workers=helpers)
    helping: dict[str, Future | dict] = {}  # by job: its warm pass or its compile
    try:
        for row in tuned_rows:
            try:
                spec = _spec(row, args)
            except Exception as e:
                helping[row["job"]] = {"error": f"no spec: {first_error_line(e)}"}
                continue
            helping[row["job"]] = pool.submit(
                warm_in_subprocess, spec, Path(cache_dir), settings.candidates
            )
            mark_progress()
        others = [Job(r["kernel"], r["config"], r["strategy"]) for r in rows]
        for job in compile_order([j for j in others if j.strategy not in TUNED]):
            helping[job.name] = pool.submit(
                compile_in_subprocess, job, cache_root, args.capability, not args.dry_run
            )
        left_out: list[str] = []
        for i, row in enumerate(tuned_rows, 1):
            if stop_at is not None and time.perf_counter() > stop_at:
                left_out = [f"{r['kernel']}.{r['config']}" for r in tuned_rows[i - 1 :]]
                print(f"autotune: stopped after {i - 1} configs (--autotune-stop-after)")
                break
            warm = _wait(helping[row["job"]])
            if args.dry_run or warm.get("error"):
                row["compile"] = warm_record(row, warm)
            else:
                kernel, row["compile"] = _tune_row(row, warm, settings, cache_dir)
                if kernel is not None:
                    kernels[(row["job"], "kernel")] = kernel
            print(f"autotune {i}/{len(tuned_rows)} {progress_line(row)}", flush=True)
            save()
        dropped = set(left_out)
        rows[:] = [r for r in rows if f"{r['kernel']}.{r['config']}" not in dropped]
        kept = {r["job"] for r in rows}
        for job, helper in helping.items():  # what is no longer needed and has not started
            if job not in kept and isinstance(helper, Future):
                helper.cancel()
        for row in rows:
            if row["strategy"] not in TUNED:
                row["compile"] = _wait(helping[row["job"]])
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a left-out warm pass may still run
    print(f"autotune: warmed and tuned in {time.perf_counter() - start:.0f} s", flush=True)
    return kernels, left_out


def tuning_order(rows: list[dict]) -> list[dict]:
    """Round robin over the kernels (in the order given), each kernel's configs by name: a run
    stopped early (--autotune-stop-after) leaves out the tail of this order, all families."""
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    by = {
        k: sorted((r for r in rows if r["kernel"] == k), key=lambda r: r["config"]) for k in kernels
    }
    longest = max((len(v) for v in by.values()), default=0)
    return [by[k][i] for i in range(longest) for k in kernels if i < len(by[k])]


def _wait(job: Future | dict) -> dict:
    """A helper's record (or its failure as one); the watchdog sees progress while it runs
    (helpers have timeouts of their own)."""
    while isinstance(job, Future):
        try:
            return job.result(timeout=5)
        except FutureTimeout:
            mark_progress()
        except Exception as e:
            return {"error": f"helper failed: {first_error_line(e)}"}
    return job


def _spec(row: dict, args: argparse.Namespace) -> dict:
    if args.dry_run:
        return spec_from_corpus(row["kernel"], row["config"], args.capability)
    return capture_spec(row["kernel"], row["config"])


def _inputs(kernel: str, module: Any, config: dict) -> dict:
    """The config's launch inputs at the bench size, as bench_gpu.bench_kernel makes them."""
    spec = BENCH[kernel]
    extra = {k: v for k, v in spec.items() if k != "size"}
    return module.make_inputs(config, spec["size"], SEED, **extra)


# -- the GPU ------------------------------------------------------------------------------------
class SpecReader:
    """Stands in for a module's KERNEL: ``KERNEL[grid](...)`` runs the JIT's warmup of that
    call on fresh in-memory caches, with a ``jit_cache_hook`` that keeps the specialization
    Triton would compile and declines the compile."""

    def __init__(self, jit: Any) -> None:
        self.jit, self.data = jit, None

    def hook(self, *, fn: Any, compile: dict, **_: Any) -> bool:
        if fn.jit_function is not self.jit:
            return False
        self.data = compile["specialization_data"]
        return True

    def __getitem__(self, grid: Any):
        def launch(*args: Any, **kwargs: Any) -> None:
            from triton import knobs

            saved, previous = self.jit.device_caches, knobs.runtime.jit_cache_hook
            self.jit.device_caches = defaultdict(self.jit.create_binder)
            knobs.runtime.jit_cache_hook = self.hook
            try:
                self.jit.run(*args, grid=grid, warmup=True, **kwargs)
            finally:
                knobs.runtime.jit_cache_hook = previous
                self.jit.device_caches = saved

        return launch


def capture_spec(kernel: str, config: str) -> dict:
    """The spec of the config's launch at the bench size, from Triton's JIT (nothing runs)."""
    from triton.runtime.driver import driver

    module = corpus_kernels.load(kernel)
    cfg = module.CONFIGS[config]
    reader = SpecReader(module.KERNEL)
    inputs = _inputs(kernel, module, cfg)
    with standing_in(module, reader):
        module.launch(cfg, inputs)
    del inputs
    if reader.data is None:
        raise RuntimeError(f"{kernel}.{config}: the launch compiled nothing")
    target = driver.active.get_current_target()
    return spec_from_jit(kernel, config, reader.data, target)


class TunedLaunch:
    """Stands in for a module's KERNEL: launches go to the autotuner, and the kernel the
    last one ran (the winner's) is kept."""

    def __init__(self, tuner: Any) -> None:
        self.tuner, self.kernel = tuner, None

    def __getitem__(self, grid: Any):
        def launch(*args: Any, **kwargs: Any) -> Any:
            self.kernel = self.tuner[grid](*args, **kwargs)
            return self.kernel

        return launch


def _tune_row(row: dict, warm: dict, settings: TuneSettings, cache_dir: str) -> tuple[Any, dict]:
    """Tune the row's launch (the GPU); (the winner's kernel or None, the compile record)."""
    import torch

    from ws_solver.triton.autotuning.autotuner import (
        Autotuner,
        WSTuningWarning,
        timer_from,
        tuning_reports,
    )

    module = corpus_kernels.load(row["kernel"])
    config = module.CONFIGS[row["config"]]
    mark_progress()
    try:
        tuner = Autotuner(
            module.KERNEL,
            module.KERNEL.arg_names,
            candidates=settings.candidates,
            timer=timer_from(None, settings.warmup_ms, settings.rep_ms),
            rounds=settings.rounds,
            cache_results=False,  # tuned afresh: what a first launch gets
            enable_options={"cache_dir": cache_dir},
        )
        seen = len(tuning_reports())
        stand_in = TunedLaunch(tuner)
        inputs = _inputs(row["kernel"], module, config)
        with standing_in(module, stand_in), warnings.catch_warnings():
            warnings.simplefilter("ignore", WSTuningWarning)  # the report has the reasons
            module.launch(config, inputs)
        torch.cuda.synchronize()
        (report,) = tuning_reports()[seen:]
        kernel = stand_in.kernel
        if hasattr(kernel, "result"):  # an async compile's future
            kernel = kernel.result()
        described = {**describe(kernel), "n_regs": getattr(kernel, "n_regs", None)}
        described["n_spills"] = getattr(kernel, "n_spills", None)
        dropin = getattr(kernel.metadata, "ws_solver", None)
        if isinstance(dropin, dict):
            described["dropin"] = dropin_summary(dropin)
        record = tuned_record(row, report.to_dict(), described, warm, settings, kernel.hash)
    except Exception as e:
        return None, {**warm_record(row, warm), "error": f"tuning: {first_error_line(e)}"}
    finally:
        inputs = None
        torch.cuda.empty_cache()
    return kernel, record


# -- records ------------------------------------------------------------------------------------
def warm_record(row: dict, warm: dict) -> dict:
    """The compile record of an autotune row that was warmed and not tuned (--dry-run, or the
    warm pass failed): the warm pass, its error if it had one."""
    record = {k: row[k] for k in ("job", "kernel", "config", "strategy")}
    record["warm"] = warm
    record["compile_s"] = warm.get("compile_s")
    if warm.get("error"):
        record["error"] = warm["error"]
    elif warm.get("builds") and all(b.get("error") for b in warm["builds"]):
        record["error"] = f"no build compiled: {warm['builds'][0]['error']}"
    return record


def tuned_record(
    row: dict,
    report: dict,
    described: dict,
    warm: dict,
    settings: TuneSettings,
    kernel_hash: str | None = None,
) -> dict:
    """The compile record of a tuned autotune row: the winner and what the drop-in compiled
    for it, the tuning report (``TuningReport.to_dict``), the winner's binary (``describe``:
    ``binary`` as the other rows'), the autotuner's settings and the warm pass, with whether
    the winner was loaded from it (``warm.hit``: the same Triton cache key)."""
    winner = next((c for c in report["candidates"] if c["name"] == report["winner"]), {})
    built = {b["name"]: b for b in warm.get("builds", [])}
    hit = (
        None if kernel_hash is None else built.get(report["winner"], {}).get("hash") == kernel_hash
    )
    return {
        **{k: row[k] for k in ("job", "kernel", "config", "strategy")},
        "winner": report["winner"],
        "strategy_used": winner.get("strategy_used"),
        "tuned": report["tuned"],
        "note": report["note"],
        "timed_binaries": sum(c["status"] == "timed" for c in report["candidates"]),
        "compile_s": report["compile_s"],  # the tuning's first launches: loads when warm
        "tune_s": report["total_s"],
        **described,
        "settings": settings.to_dict(),
        "warm": {**warm, "hit": hit},
        "autotune": report,
    }


def progress_line(row: dict) -> str:
    """One line per autotune row: the winner and where the time went, or why it failed."""
    rec = row["compile"]
    name = f"{row['kernel']}.{row['config']}"
    warm = rec.get("warm") or {}
    warmed = f"warm {warm.get('wall_s', '-')} s"
    if rec.get("error"):
        return f"{name}: FAILED {rec['error'][:160]} ({warmed})"
    if "autotune" not in rec:
        failed = sum(bool(b.get("error")) for b in warm.get("builds", []))
        return f"{name}: {warmed}, builds {warm.get('compile_s')} s, {failed} failed to build"
    hit = {True: "loaded", False: "NOT loaded", None: "?"}[warm.get("hit")]
    return (
        f"{name}: {rec['winner']} of {rec['timed_binaries']} timed in {rec['tune_s']:.1f} s "
        f"(compile {rec['compile_s']:.2f}, winner {hit} from the {warmed} pass)"
    )

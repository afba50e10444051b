"""On the GPU: verify each compiled variant, then time the verified ones against stock
Triton and the vendor reference in interleaved rounds. A watchdog ends the process when a
kernel hangs, after saving what was measured."""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import hopper_route, variants
from benchmarks.common.bench_compile import Job, build_launcher, compile_job, first_error_line
from benchmarks.common.bench_strategies import EXPERIMENTAL, ROUNDS, STRATEGIES, TUNED, status_of
from benchmarks.gpu import verify_gpu
from benchmarks.gpu.bench_vendor import kernel_work, time_alternatives, vendor
from corpus import kernels as corpus_kernels
from ws_solver.triton.autotuning.tuning import balanced_orders

BENCH = corpus_kernels.BENCH_INPUTS  # sizes that fill the H200 (make_inputs arguments)
STALL_S = 60  # no progress for this long: save what we have and exit (a hung kernel)


_progress = [time.monotonic()]  # when the run last moved on (the watchdog reads it)


def mark_progress() -> None:
    _progress[0] = time.monotonic()


def watchdog(save) -> None:
    """A kernel that never finishes stalls the process: record that and exit."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(5)
            if time.monotonic() - _progress[0] > STALL_S:
                print(f"\nSTALLED: no progress for {STALL_S} s (hung kernel?)", flush=True)
                with contextlib.suppress(Exception):
                    save()
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def timed_once(rows: list[dict]) -> tuple[list[dict], dict[int, dict]]:
    """(rows to time, id(row) -> the timed row it shares a binary with): a binary is timed
    once per config, so that two names for one kernel cannot differ by clock noise."""
    first: dict[str, dict] = {}
    shared: dict[int, dict] = {}
    for row in rows:
        key = (row.get("compile") or {}).get("binary")
        if key and key in first:
            shared[id(row)] = first[key]
        elif key:
            first[key] = row
    return [r for r in rows if id(r) not in shared], shared


def verify_then_time(
    rows: list[dict],
    cache_root: Path,
    save: Callable[[], None],
    kernels: list[str],
    rounds: int,
    sustain: Sustain | None,
    quick: Quick | None = None,
    preloaded: dict | None = None,
) -> None:
    """Verify `rows` and time those of `kernels`. Triton's built-in path goes last, since it
    can hang (a deadlocked kernel ends the process; what came before is saved); then each
    config is timed again with stock's variants in the same rounds (`timed_with_stock`).
    `quick` shortens a sweep over many configs (see Quick). `preloaded`: kernels built here
    already, by (job, "kernel") (the autotune rows': bench_autotune)."""
    quick = quick or Quick()
    early = [r for r in rows if r["strategy"] != "builtin"]
    late = [r for r in rows if r["strategy"] == "builtin"]
    compiled: dict = {}
    if quick.with_stock_only:  # verify all, then time each config once
        for phase in (early, late):
            compiled.update(verify_all(phase, cache_root, save, preloaded))
        with_stock = timed_with_stock(early, late)
        together = {id(r) for r in with_stock}
        alone = [r for r in early if id(r) not in together]  # configs stock cannot build
        for timed in (with_stock, alone):
            for kernel in kernels:
                print(f"timing {kernel}", flush=True)
                bench_kernel(kernel, compiled, timed, rounds, sustain, quick)
                save()
        return
    for phase in (early, late):
        compiled.update(verify_all(phase, cache_root, save, preloaded))
        timed = phase if phase is early else timed_with_stock(early, late)
        for kernel in kernels:
            print(f"timing {kernel}", flush=True)
            bench_kernel(kernel, compiled, timed, rounds, sustain, quick)
            save()


def timed_with_stock(early: list[dict], late: list[dict]) -> list[dict]:
    """The rows the second timing pass times: stock's (`late`) and, in each config where one
    of them verified, every other variant, so that the ratios to stock come from one set of
    interleaved rounds. Timed in separate passes, identical cubins differed by 0.5-0.8%
    geomean in stock's favour (up to 2.8% on one config; 2026-12-01 Triton 3.9 runs), as
    much as the plans differ. Early rows come first: a stock cubin that is also another
    variant's is timed once, under that variant's name (`timed_once`)."""
    configs = {(r["kernel"], r["config"]) for r in late if (r.get("verify") or {}).get("passed")}
    return [r for r in early if (r["kernel"], r["config"]) in configs] + late


# -- launching ---------------------------------------------------------------------------------
class Bound:
    """Stands in for a module's @triton.jit KERNEL: `KERNEL[grid](*args, **kw)` launches a
    CompiledKernel with the arguments bound the way the JIT binds them."""

    def __init__(self, fn: Any, compiled: Any) -> None:
        self.fn = fn
        self.compiled = compiled
        self.names = list(fn.arg_names)
        self.defaults = {p.name: p.default for p in fn.params if getattr(p, "has_default", False)}

    def __getitem__(self, grid: Any):
        grid3 = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        runner = self.compiled[grid3]

        def launch(*args: Any, **kwargs: Any) -> Any:
            for key in corpus_kernels.OPTION_KEYS:
                kwargs.pop(key, None)
            values = dict(zip(self.names, args, strict=False))
            values.update(kwargs)
            runner(*[values[n] if n in values else self.defaults[n] for n in self.names])
            return self.compiled

        return launch


@contextlib.contextmanager
def bound(module: Any, compiled: Any) -> Iterator[None]:
    original = module.KERNEL
    module.KERNEL = Bound(original, compiled)
    try:
        yield
    finally:
        module.KERNEL = original


# -- timing ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sustain:
    """Back-to-back timing with the GPU sampled (benchmarks/gpu/gpu_power.py), for the configs
    whose name contains `configs`: `seconds` per variant, in `rounds` interleaved rounds."""

    seconds: float
    rounds: int = 2
    configs: str = ""


@dataclass(frozen=True)
class Quick:
    """A shorter timing for a sweep over many configs: `rep_ms` of do_bench per timing (its
    default 100), no vendor reference, and (`with_stock_only`) no first pass without stock:
    each config is timed once, all its variants and stock's in the same balanced rounds."""

    rep_ms: int = 100
    vendor: bool = True
    with_stock_only: bool = False


def bench_kernel(
    kernel: str,
    compiled: dict[tuple[str, str], Any],
    results: list[dict],
    rounds: int = ROUNDS,
    sustain: Sustain | None = None,
    quick: Quick | None = None,
) -> None:
    """Time every verified variant of `kernel` and its vendor reference at the bench size.

    Each config's variants and its vendor reference are timed in `rounds` interleaved passes and
    the median is reported: identical binaries timed one after the other differed by up to
    5% on the H200 (clocks drift), more than the differences between plans. Each pass starts
    one variant later (``tuning.round_orders``), and `rounds` is rounded up so that every
    binary takes every place equally often (``tuning.balanced_orders``): the place in the
    order moved the ratios by about 1% (2026-12-02-triton39-h200-rotated)."""
    import torch
    from triton.testing import do_bench

    quick = quick or Quick()

    def timed(fn: Any) -> float:
        return do_bench(fn, warmup=25, rep=quick.rep_ms, return_mode="median")

    module = corpus_kernels.load(kernel)
    spec = BENCH[kernel]
    names = verify_gpu.outputs_of(kernel)
    for config_name, config in module.CONFIGS.items():
        rows = [r for r in results if r["kernel"] == kernel and r["config"] == config_name]
        timed_strategies = STRATEGIES + EXPERIMENTAL + TUNED
        todo = [
            r
            for r in rows
            if r.get("verify", {}).get("passed")
            and (
                r["strategy"] in timed_strategies
                or variants.parse(r["strategy"])
                or hopper_route.parse(r["strategy"])
            )
        ]
        if not todo:
            continue
        mark_progress()
        kwargs = {k: v for k, v in spec.items() if k != "size"}
        inputs = module.make_inputs(config, spec["size"], 1234, **kwargs)
        work, unit = kernel_work(kernel, config, inputs)
        scale = 1e-12 if unit == "TFLOP/s" else 1e-9
        ref = vendor(kernel, config, inputs) if quick.vendor else None
        vendor_row: dict = {"label": ref["label"] if ref else "none"}
        vendor_out = None
        if ref is not None:
            try:
                vendor_out = ref["fn"]()
            except Exception as e:
                vendor_row["error"] = first_error_line(e)
        check = _bench_check(kernel, module, inputs, vendor_out)

        def launch(config=config, inputs=inputs) -> Any:
            return module.launch(config, inputs)

        runnable = []
        for row in todo:
            mark_progress()
            with bound(module, compiled[(row["job"], "kernel")]):
                try:
                    verify_gpu.poison(inputs, names)
                    out = verify_gpu.as_tuple(launch())
                    torch.cuda.synchronize()
                    err = check(out)
                except Exception as e:
                    row["bench"] = {"error": first_error_line(e), "vendor": vendor_row}
                    continue
            row["bench"] = {"size": spec, "unit": unit, "rel_err_at_size": err, "ms_rounds": []}
            if err is not None and err > verify_gpu.TOLERANCE:
                row["bench"]["failed"] = f"rel err {err:.3g} at the bench size"
            runnable.append(row)
        vendor_times: list[float] = []
        to_time, shared = timed_once(runnable)
        by_job = {row["job"]: row for row in to_time}
        with_vendor = vendor_out is not None and "error" not in vendor_row
        for order in balanced_orders([VENDOR] * with_vendor + list(by_job), rounds):
            for job in order:  # each round starts one variant later: no fixed position
                if job == VENDOR:
                    vendor_times.append(timed(ref["fn"]))
                    continue
                row = by_job[job]
                if row not in to_time:
                    continue  # it failed in an earlier round
                mark_progress()
                with bound(module, compiled[(row["job"], "kernel")]):
                    try:
                        row["bench"]["ms_rounds"].append(timed(launch))
                    except Exception as e:
                        row["bench"] = {"error": first_error_line(e), "vendor": vendor_row}
                        to_time.remove(row)
        for row in runnable:
            source = shared.get(id(row))
            if source is not None and source in to_time:
                row["bench"]["ms_rounds"] = list(source["bench"]["ms_rounds"])
                row["bench"]["same_binary_as"] = source["strategy"]
        runnable = [r for r in runnable if r["bench"].get("ms_rounds")]
        vendor_rate = None
        if vendor_times:
            ms = statistics.median(vendor_times)
            vendor_rate = ref.get("work", work) * scale / (ms * 1e-3)
            vendor_row.update(ms=ms, rate=vendor_rate, unit=unit, ms_rounds=vendor_times)
            if ref.get("alternatives"):
                vendor_row["alternatives"] = time_alternatives(ref, work, scale)
        for row in runnable:
            b = row["bench"]
            b["ms"] = statistics.median(b["ms_rounds"])
            b["rate"] = work * scale / (b["ms"] * 1e-3)
            b["vendor"] = vendor_row
            b["ratio_to_vendor"] = (b["rate"] / vendor_rate) if vendor_rate else None
        if sustain and sustain.configs in config_name and vendor_rate:
            _sustained(module, compiled, ref, vendor_row, to_time, launch, work, sustain)
            for row in runnable:
                source = shared.get(id(row))
                if source is not None and "sustained" in source["bench"]:
                    row["bench"]["sustained"] = source["bench"]["sustained"]
        del inputs, vendor_out
        torch.cuda.empty_cache()


VENDOR = " vendor"  # a run name no job has (job names have no spaces)


def _sustained(
    module: Any,
    compiled: dict,
    ref: dict,
    vendor_row: dict,
    to_time: list[dict],
    launch: Any,
    work: float,
    sustain: Sustain,
) -> None:
    """Run the vendor reference and each timed variant back to back for `sustain.seconds`,
    in interleaved rounds, with the GPU's clock and power sampled. A kernel that is limited
    by the power cap runs slower this way than in do_bench's short bursts; the vendor's too."""
    import torch

    from benchmarks.gpu import gpu_power

    kernels = {row["job"]: compiled[(row["job"], "kernel")] for row in to_time}
    runs = {VENDOR: ref["fn"], **dict.fromkeys(kernels, launch)}

    def scope(name: str) -> contextlib.AbstractContextManager:
        return bound(module, kernels[name]) if name in kernels else contextlib.nullcontext()

    def progress(name: str, row: dict) -> None:
        mark_progress()

    windows = gpu_power.interleaved(
        runs, sustain.seconds, sustain.rounds, work, torch.cuda.synchronize, scope, progress
    )
    vendor_rate = statistics.median(r["rate"] for r in windows[VENDOR])
    vendor_row["sustained"] = {"rate": vendor_rate, "rounds": windows[VENDOR]}
    for row in to_time:
        rate = statistics.median(r["rate"] for r in windows[row["job"]])
        row["bench"]["sustained"] = {
            "rate": rate,
            "ratio_to_vendor": rate / vendor_rate,
            "rounds": windows[row["job"]],
        }


def _bench_check(kernel: str, module: Any, inputs: dict, vendor_out: Any):
    """Relative error at the bench size: fp32 reference where cheap, else the vendor's."""
    if kernel in ("attention_fwd", "attention_bwd"):
        if vendor_out is None:
            return lambda out: None
        want = verify_gpu.as_tuple(vendor_out)
        if kernel == "attention_bwd":
            want = want[1:3]  # (dK, dV)
        return lambda out: max(
            verify_gpu.relative_error(o.float(), w.float()) for o, w in zip(out, want, strict=False)
        )
    ref = verify_gpu.as_tuple(module.reference(inputs))
    return lambda out: max(verify_gpu.relative_error(o, r) for o, r in zip(out, ref, strict=True))


def verify_all(results: list[dict], cache_root: Path, save, preloaded: dict | None = None) -> dict:
    """Load each compiled variant (or take it from `preloaded`, by (job, "kernel")) and run
    the correctness checks; returns the kernels."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    compiled: dict = {}
    verified: dict[tuple[str, str, str], dict] = {}  # (kernel, config, binary) -> first row
    for row in results:
        if (row["compile"] or {}).get("error"):
            continue
        job = Job(row["kernel"], row["config"], row["strategy"])
        try:
            kernel = (preloaded or {}).get((row["job"], "kernel"))
            if kernel is None:
                kernel, _ = compile_job(job, cache_root)  # served from the strategy's cache
                build_launcher(kernel, cache_root)
            row["compile"]["n_regs"] = getattr(kernel, "n_regs", None)
            row["compile"]["n_spills"] = getattr(kernel, "n_spills", None)
        except Exception as e:
            row["verify"] = {"passed": False, "why": f"load failed: {first_error_line(e)}"}
            continue
        compiled[(row["job"], "kernel")] = kernel
        same = (row["kernel"], row["config"], row["compile"].get("binary") or row["job"])
        if same in verified:  # one cubin, one launch: the same verdict
            row["verify"] = {**verified[same]["verify"], "same_binary_as": verified[same]["job"]}
            continue
        verified[same] = row
        module = corpus_kernels.load(row["kernel"])
        config = module.CONFIGS[row["config"]]
        t0 = time.perf_counter()
        row["verify"] = {"in_progress": True, "passed": False, "why": "did not finish (hang?)"}
        save()
        with bound(module, kernel):
            row["verify"] = verify_gpu.check_variant(module, row["kernel"], config)
        row["verify"]["wall_s"] = round(time.perf_counter() - t0, 2)
        row["verify"]["in_progress"] = False
        save()
        err = row["verify"].get("max_rel_err")
        print(
            f"verify {row['job']:<60} {status_of(row):<14} "
            f"{'-' if err is None else format(err, '.3g')} {row['verify'].get('why', '')[:80]}",
            flush=True,
        )
    return compiled

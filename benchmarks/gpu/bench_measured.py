"""On the GPU: stock Triton, the drop-in's `optimal` and its `measured` mode on kernels written
the ways users write them, verified and timed in the same interleaved rounds (issue 48).

    python -m benchmarks.gpu.bench_measured select        # writes measured_space.json (CPU)
    python -m benchmarks.gpu.bench_measured --space benchmarks/gpu/measured_space.json \
        --part 1/2 --out DIR [--jobs 14] [--cache-root DIR] [--overlap] [--resume] [--list]
    python -m benchmarks.gpu.bench_measured summary DIR/results*.jsonl [--out MD]
    python -m benchmarks.gpu.bench_measured --out DIR [--family gemm_tma_indesc]  # issue 48's
        # first sweep: one family, fp16/fp8, M = N = 8192, K = 4096 (no --space)
    python -m benchmarks.gpu.bench_measured --out DIR --second-process [--space ...]
    ... --candidates stock,optimal,none,heuristic,stock~s+1   # measured mode's candidates

The configurations (``measured_space``) are chosen before timing; ``--part K/N`` builds and
times only the K-th of N equal chunks, into its own ``results-partKofN.jsonl``. Per config:

1. Builds, in ``--jobs`` spawned workers (one Triton cache: the timed process loads binaries
   instead of compiling): stock (no drop-in), `optimal`, and `measured`'s own builds (stock's,
   optimal's, none's and the reference, by ``kernel.warmup`` under ``enable("measured")``:
   the same JIT keys and cache folders its first launch looks up). ``--overlap``: the main
   process times config i while the workers build the next ones (niced).
2. In this process: stock, `optimal` and `measured` each launched on the family's bench
   inputs (``corpus.kernels.BENCH_INPUTS``) through the corpus's ``launch`` (the user's
   ``kernel[grid](...)``), outputs poisoned first; checked against the fp32 reference
   (attention: torch SDPA, as bench_gpu does at this size) and for two bitwise-equal launches;
   `measured`'s first launch timed (wall: its builds loaded, checks, timings) with its extra
   memory; then the three timed in interleaved rounds (CUDA events around ~``--batch-ms`` of
   back-to-back launches, each right after ``--warm-ms`` of the same launches untimed, as
   measured mode times; ``--rounds`` rounded up to whole rotations). A variant that launched
   another's binary is not timed again: it takes that one's times (``timed_as``).
3. ``--second-process``: each config launched once in measured mode in a new process (the
   choice read from the disk cache: pass the same ``--cache-root``).

Rows are appended to the jsonl as each config finishes, with the compile report's decision
(rule, the kept kernel's and stock's ptxas registers and spills) and the binaries' n_regs and
n_spills; the summary is ``measured_summary``'s. A config with no progress for ``--stall-s``
(a hung kernel) or one that loses the CUDA context ends the call with its row written;
``--resume`` goes on after it. ``--cache-root``: fresh Triton and ws_solver caches there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.gpu import measured_space, measured_summary
from ws_solver.triton.autotuning.measured import WARM_MS as MEASURED_WARM_MS
from ws_solver.triton.autotuning.tuning import same_binaries

ROUNDS = 5
BATCH_MS = 30.0
WARM_MS = MEASURED_WARM_MS  # the bench reads the power state measured mode's tuning reads
SEED = 1234  # bench_gpu's bench-size seed
LEGACY_SIZES = {"M": 8192, "N": 8192, "K": 4096}
VARIANTS = measured_summary.VARIANTS
# ``--candidates``: measured mode's candidates in this process and its build workers (empty:
# the drop-in's default, ``core.candidates.MEASURED_CANDIDATES``).
CANDIDATES: tuple[str, ...] = ()


# -- inputs and launches ---------------------------------------------------------------------
def make_inputs(row: dict, module: Any, seed: int = SEED, size: int | None = None) -> dict:
    """The family's bench inputs (corpus.kernels.BENCH_INPUTS; `size` replaces theirs), or
    the first sweep's M = N = 8192, K = 4096 for a row with a dtype."""
    from corpus import kernels as corpus_kernels

    if "dtype" in row:
        return _legacy_inputs(row["dtype"], seed)
    spec = {**corpus_kernels.BENCH_INPUTS[row["family"]], **({"size": size} if size else {})}
    return module.make_inputs(row["config"], seed=seed, **spec)


def _legacy_inputs(dtype: str, seed: int) -> dict[str, Any]:
    import torch

    from corpus.kernels._common import randn

    element = torch.float16 if dtype == "fp16" else torch.float8_e4m3fn
    scale = 1.0 if dtype == "fp16" else 0.5
    m, n, k = LEGACY_SIZES["M"], LEGACY_SIZES["N"], LEGACY_SIZES["K"]
    return {
        "a": randn((m, k), element, seed, scale),
        "b": randn((n, k), element, seed + 1, scale),
        "c": torch.empty((m, n), device="cuda", dtype=torch.float16),
    }


class _Proxy:
    """Stands in for a module's KERNEL: ``KERNEL[grid](...)`` warms it up instead
    (``warmup``), or launches it and keeps what the launch returned (``seen``)."""

    def __init__(self, kernel: Any, warmup: bool) -> None:
        self.kernel, self.warmup, self.seen = kernel, warmup, []

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.warmup:
                out = self.kernel.warmup(*args, grid=grid, **kwargs)
            else:
                out = self.kernel[grid](*args, **kwargs)
            self.seen.append(out)
            return out

        return call


@contextlib.contextmanager
def proxied(module: Any, warmup: bool = False) -> Iterator[_Proxy]:
    """The corpus module's ``launch`` goes through a _Proxy while this is open."""
    original = module.KERNEL
    proxy = module.KERNEL = _Proxy(original, warmup)
    try:
        yield proxy
    finally:
        module.KERNEL = original


def _mode(name: str) -> None:
    import ws_solver.triton as wst

    if name == "stock":
        wst.disable()
    elif name == "measured":
        wst.enable(name, candidates=CANDIDATES)
    else:
        wst.enable(name)


def _error_line(e: BaseException) -> str:
    from benchmarks.common.bench_compile import first_error_line

    return first_error_line(e)


# -- phase 1: builds in workers ----------------------------------------------------------------
def _worker_init(nice: int, candidates: tuple[str, ...] = ()) -> None:
    global CANDIDATES
    CANDIDATES = candidates
    if nice:  # --overlap: the timed process comes first
        os.nice(nice)


def build(row: dict, size: int | None = None) -> dict:
    """Warm up stock's kernel, `optimal`'s and measured mode's builds of one config."""
    import warnings

    import torch

    import ws_solver.triton as wst
    from corpus import kernels as corpus_kernels

    module = corpus_kernels.load(row["family"])
    inputs = make_inputs(row, module, size=size)
    out: dict = {}
    for name in VARIANTS:
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                _mode(name)
                with proxied(module, warmup=True):
                    module.launch(row["config"], inputs)
                out[name] = {"s": round(time.perf_counter() - start, 2)}
            except Exception as e:
                out[name] = {"error": _error_line(e)}
            finally:
                wst.disable()
        said = [str(w.message)[:300] for w in caught if "ws_solver" in str(w.message)]
        if said:  # measured's warmup warns, not raises, when a candidate does not build
            out[name]["warnings"] = said
    del inputs
    torch.cuda.empty_cache()
    return out


# -- phase 2: verify, measure, time ------------------------------------------------------------
def _checker(row: dict, module: Any, inputs: dict) -> Callable[[tuple], float | None]:
    """Relative error of a launch's outputs: bench_gpu's check at the bench size (the fp32
    reference; attention: torch SDPA's output, its fp32 reference would take ~70 GB)."""
    from benchmarks.gpu.bench_gpu import _bench_check
    from benchmarks.gpu.bench_vendor import vendor

    family = row["family"]
    if family.startswith("attention_fwd"):
        ref = vendor("attention_fwd", row["config"], inputs)
        return _bench_check("attention_fwd", module, inputs, ref["fn"]() if ref else None)
    return _bench_check(family, module, inputs, None)


def describe(compiled: Any) -> dict:
    """What the launched binary is: its digest, registers and local memory (Triton's n_regs,
    n_spills), and the drop-in's report (strategy, decision rule, kept and stock usage)."""
    from benchmarks.common.bench_compile import binary_digest

    out: dict = {}
    if compiled is None or not hasattr(compiled, "asm"):
        return out
    out["binary"] = binary_digest(compiled)
    out["n_regs"] = getattr(compiled, "n_regs", None)
    out["n_spills"] = getattr(compiled, "n_spills", None)
    report = getattr(getattr(compiled, "metadata", None), "ws_solver", None)
    if isinstance(report, dict):
        decision = report.get("decision") or {}
        out["strategy_used"] = report.get("strategy_used")
        out["rule"] = decision.get("rule")
        out["usage"] = measured_summary.decision_usage(decision)
    return out


def first_launch(name: str, module: Any, row: dict, inputs: dict, check: Callable) -> dict:
    """Launch one variant on poisoned outputs: error, the binary, two launches bitwise equal;
    for `measured`, its tuning report and the memory its first launch took."""
    import torch

    from benchmarks.gpu import verify_gpu
    from ws_solver.triton.autotuning import autotuner

    names = verify_gpu.outputs_of(row["family"])
    verify_gpu.poison(inputs, names)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    reports = len(autotuner.tuning_reports())
    start = time.perf_counter()
    try:
        _mode(name)
        with proxied(module) as proxy:
            outputs = verify_gpu.as_tuple(module.launch(row["config"], inputs))
        torch.cuda.synchronize()
    except Exception as e:
        return {"status": "error", "error": _error_line(e)}
    entry: dict = {"first_launch_s": round(time.perf_counter() - start, 3)}
    if name == "measured":
        entry["peak_extra_bytes"] = torch.cuda.max_memory_allocated() - base
        tuned = autotuner.tuning_reports()[reports:]  # this launch's choice, if it made one
        entry["winner"] = tuned[-1].winner if tuned else None
        entry["tuning"] = tuned[-1].to_dict() if tuned else None
    entry.update(describe(proxy.seen[-1] if proxy.seen else None))
    try:
        entry["error_rel"] = check(outputs)
        first = [inputs[n].clone() for n in names]
        verify_gpu.poison(inputs, names)
        module.launch(row["config"], inputs)
        torch.cuda.synchronize()
        same = [verify_gpu.same_bits(a, inputs[n]) for a, n in zip(first, names, strict=True)]
        entry["repeatable"] = all(same)
    except Exception as e:
        return {**entry, "status": "error", "error": _error_line(e)}
    err = entry["error_rel"]
    right = err is not None and err <= verify_gpu.TOLERANCE
    entry["status"] = "ok" if right and entry["repeatable"] else "wrong"
    return entry


def batch_ms(call: Callable[[], Any], target_ms: float, warm_ms: float = 0.0) -> float:
    """ms per launch over back-to-back launches filling about ``target_ms``, after
    ``warm_ms`` of the same launches untimed: measured mode's own timer
    (`launcher.batch_timer`; until 254c27e this bench kept its own copy, at most 200 launches
    a batch)."""
    from ws_solver.triton.autotuning.launcher import batch_timer

    return batch_timer(target_ms, warm_ms)(call)


def time_variants(
    names: list[str], call: Callable, rounds: int, target_ms: float, warm_ms: float = 0.0
) -> dict:
    """{variant: ms per round}: each round in a rotated order, whole rotations."""
    from benchmarks.gpu.bench_gpu import mark_progress
    from ws_solver.triton.autotuning.tuning import balanced_orders

    times: dict[str, list[float]] = {n: [] for n in names}
    for order in balanced_orders(names, rounds):
        for name in order:
            mark_progress()
            _mode(name)
            times[name].append(batch_ms(call, target_ms, warm_ms))
    return times


def _cuda_alive() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        return True
    except Exception:
        return False


def measure(row: dict, args: argparse.Namespace) -> dict:
    """Verify, then time, the three variants of one config (module docstring, phase 2)."""
    import torch
    import triton

    import ws_solver.triton as wst
    from benchmarks.gpu.bench_gpu import mark_progress
    from corpus import kernels as corpus_kernels

    out: dict = {k: row[k] for k in ("family", "name", "config", "dtype") if k in row}
    out.update(triton=triton.__version__, gpu=torch.cuda.get_device_name(0))
    module = corpus_kernels.load(row["family"])
    try:
        inputs = make_inputs(row, module, size=args.size)
        check = _checker(row, module, inputs)
    except Exception as e:  # out of memory for a reference, say: the config is not measured
        out["error"] = f"inputs or reference: {_error_line(e)}"
        return out
    ok = []
    for name in VARIANTS:
        mark_progress()
        out[name] = first_launch(name, module, row, inputs, check)
        if out[name]["status"] == "ok":
            ok.append(name)
        if out[name]["status"] == "error" and not _cuda_alive():
            out["cuda_lost"] = f"after {name}: {out[name]['error']}"
            wst.disable()
            return out
    # One binary is one kernel: a variant that launched another's binary takes its times.
    same = same_binaries({name: out[name].get("binary") for name in ok})
    try:
        times = time_variants(
            [name for name in ok if same[name] == name],
            lambda: module.launch(row["config"], inputs),
            args.rounds,
            args.batch_ms,
            args.warm_ms,
        )
    except Exception as e:
        out["timing_error"] = _error_line(e)
        times = {}
    wst.disable()
    for name in ok:
        if same[name] != name and same[name] in times:
            out[name]["timed_as"] = same[name]
            times[name] = times[same[name]]
    for name, ms in times.items():
        out[name]["ms"] = [round(t, 5) for t in ms]
        out[name]["median_ms"] = round(statistics.median(ms), 5)
    return out


def second_process(rows: list[dict], size: int | None) -> list[dict]:
    """Each config launched once in measured mode: the first launch's wall seconds."""
    import torch

    import ws_solver.triton as wst
    from corpus import kernels as corpus_kernels
    from ws_solver.triton.autotuning import autotuner

    wst.enable("measured", candidates=CANDIDATES)
    out = []
    for row in rows:
        module = corpus_kernels.load(row["family"])
        inputs = make_inputs(row, module, size=size)
        start = time.perf_counter()
        try:
            module.launch(row["config"], inputs)
            torch.cuda.synchronize()
        except Exception as e:
            out.append({"family": row["family"], "name": row["name"], "error": _error_line(e)})
            continue
        tuned = autotuner.last_tuning_report()
        out.append(
            {
                "family": row["family"],
                "name": row["name"],
                "first_launch_s": round(time.perf_counter() - start, 3),
                "cached": bool(tuned and tuned.cached),
                "winner": tuned.winner if tuned else None,
            }
        )
        del inputs
    return out


# -- the command -------------------------------------------------------------------------------
def rows_of(args: argparse.Namespace) -> list[dict]:
    """The configurations this call times: the selection file's (or the first sweep's), of
    --family if given, the --part chunk of them."""
    if args.space:
        rows = measured_space.load(args.space)
        if args.family:
            rows = [r for r in rows if r["family"] == args.family]
    else:
        rows = measured_space.legacy_sweep(args.family or "gemm_tma_indesc")
    if args.limit:
        rows = rows[: args.limit]
    return measured_space.part(rows, *args.part)


def _set_caches(root: Path | None) -> None:
    """Fresh caches under `root` (Triton's, and ws_solver's plans and tuning choices), set
    before anything imports Triton; the spawned workers inherit them. Plans of a cache set
    before (gpu_env.sh's carried .plans) are copied in, its tuning choices are not."""
    if root is None:
        return
    import shutil

    root.mkdir(parents=True, exist_ok=True)
    plans, old = root / "ws_solver", os.environ.get("WS_SOLVER_CACHE_DIR")
    if old and Path(old).is_dir() and not plans.exists():
        shutil.copytree(old, plans, ignore=shutil.ignore_patterns("tuning"))
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    os.environ["WS_SOLVER_CACHE_DIR"] = str(plans)


def _done(path: Path) -> set[str]:
    """Configs a killed call already wrote (--resume), without those that lost CUDA."""
    if not path.exists():
        return set()
    rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    return {measured_summary.key(r) for r in rows if "cuda_lost" not in r}


def run(args: argparse.Namespace) -> int:
    """Build, then verify and time, this call's configs; append a row per config."""
    rows = rows_of(args)
    suffix = measured_space.part_suffix(*args.part)
    results = args.out / f"results{suffix}.jsonl"
    if args.resume:
        done = _done(results)
        rows = [r for r in rows if measured_summary.key(r) not in done]
    elif results.exists():
        results.unlink()
    import functools
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from benchmarks.gpu import bench_gpu

    print(f"{len(rows)} configs, {args.jobs} build workers", flush=True)
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    init = (5 if args.overlap else 0, CANDIDATES)
    with ProcessPoolExecutor(args.jobs, context, _worker_init, init) as pool:
        work = functools.partial(build, size=args.size)
        futures = [pool.submit(work, row) for row in rows]
        builds = None if args.overlap else [_built(f) for f in futures]
        if builds is not None:
            pool.shutdown()  # the workers' CUDA contexts go before the timing
            print(f"built {len(rows)} configs in {time.perf_counter() - start:.0f} s", flush=True)
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        current: dict = {}

        def stalled() -> None:
            why = f"stalled: no progress for {bench_gpu.STALL_S} s"
            _append(results, {**current, "error": why})

        bench_gpu.STALL_S = args.stall_s
        bench_gpu.mark_progress()
        bench_gpu.watchdog(stalled)
        for i, (row, future) in enumerate(zip(rows, futures, strict=True), 1):
            built = builds[i - 1] if builds is not None else _built(future)
            bench_gpu.mark_progress()
            current = {k: row[k] for k in ("family", "name") if k in row}
            try:
                result = measure(row, args)
            except Exception as e:  # a bug of this bench's own: the next config still runs
                result = {**current, "error": f"measure: {_error_line(e)}"}
            result["builds"] = built
            torch.cuda.empty_cache()  # the config's inputs and references, freed on return
            _append(results, result)
            print(_progress_line(i, len(rows), result, time.perf_counter() - start), flush=True)
            if "cuda_lost" in result:
                print(f"CUDA context lost ({result['cuda_lost']}): rerun with --resume", flush=True)
                os._exit(4)  # the pool's workers hold CUDA contexts: do not wait on them
    text = measured_summary.report(measured_summary.load([results]))
    (args.out / f"summary{suffix}.md").write_text(text + "\n")
    print(text)
    return 0


def _built(future: Any) -> dict:
    """A worker's build record; a worker that died (a crash in a compile) is recorded, and
    the timed process then compiles what is missing itself."""
    try:
        return future.result()
    except Exception as e:
        return {"error": _error_line(e)}


def _append(path: Path, row: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row, default=str) + "\n")
        f.flush()


def _progress_line(i: int, n: int, result: dict, elapsed: float) -> str:
    ms = {v: (result.get(v) or {}).get("median_ms") for v in VARIANTS}
    m = result.get("measured") or {}
    status = {v: (result.get(v) or {}).get("status") for v in VARIANTS}
    return (
        f"[{i}/{n} {elapsed:.0f}s] {measured_summary.key(result)} ms {ms} status {status} "
        f"measured picks {m.get('winner')} first {m.get('first_launch_s')} s"
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--space", type=Path, help="a selection file (measured_space.json)")
    p.add_argument("--family", help="only this family (without --space: the first sweep's)")
    p.add_argument("--part", default="1/1", help="K/N: the K-th of N equal chunks (1-based)")
    p.add_argument("--jobs", type=int, default=12, help="build workers")
    p.add_argument("--rounds", type=int, default=ROUNDS)
    p.add_argument("--batch-ms", type=float, default=BATCH_MS)
    p.add_argument(
        "--warm-ms",
        type=float,
        default=WARM_MS,
        help="each timed batch after this long of the same launches, untimed "
        "(measured mode's own; 0: the batch reads whatever state the last one left)",
    )
    p.add_argument("--size", type=int, default=None, help="problem size for every family")
    p.add_argument("--limit", type=int, default=0, help="the first N configs only")
    p.add_argument("--cache-root", type=Path, help="fresh Triton and ws_solver caches here")
    p.add_argument("--overlap", action="store_true", help="time while later configs build")
    p.add_argument("--resume", action="store_true", help="skip configs already in the jsonl")
    p.add_argument("--stall-s", type=float, default=60.0, help="no progress this long: exit")
    p.add_argument("--list", action="store_true", help="print the configs and exit (CPU)")
    p.add_argument("--second-process", action="store_true")
    p.add_argument(
        "--candidates",
        default="",
        help="measured mode's candidates, comma-separated (default: the drop-in's own)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["select"]:
        return select_main(argv[1:])
    if argv[:1] == ["summary"]:
        return summary_main(argv[1:])
    p = parser()
    args = p.parse_args(argv)
    try:
        args.part = measured_space.parse_part(args.part)
    except ValueError as e:
        p.error(str(e))
    if args.list:
        rows = rows_of(args)
        for r in rows:
            print(f"{measured_summary.key(r)}\t{json.dumps(r['config'], sort_keys=True)}")
        print(f"{len(rows)} configs: {measured_space.counts(rows)}", file=sys.stderr)
        return 0
    if args.out is None:
        p.error("--out is required (except with --list)")
    global CANDIDATES
    CANDIDATES = tuple(c.strip() for c in args.candidates.split(",") if c.strip())
    _set_caches(args.cache_root)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.second_process:
        result = second_process(rows_of(args), args.size)
        suffix = measured_space.part_suffix(*args.part)
        (args.out / f"second_process{suffix}.json").write_text(json.dumps(result, indent=1))
        for r in result:
            print(r, flush=True)
        return 0
    return run(args)


def select_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=measured_space.__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=measured_space.SPACE_FILE)
    p.add_argument("--per-family", type=int, default=measured_space.PER_FAMILY)
    p.add_argument("--min-per-class", type=int, default=measured_space.MIN_PER_CLASS)
    args = p.parse_args(argv)
    doc = measured_space.write(args.out, args.per_family, args.min_per_class)
    print(f"{args.out}: {doc['total']} configs; {doc['counts']}; classes {doc['classes']}")
    return 0


def summary_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=measured_summary.__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", type=Path, help="results*.jsonl of one or more calls")
    p.add_argument("--out", type=Path, help="also write the markdown here")
    args = p.parse_args(argv)
    text = measured_summary.report(measured_summary.load(args.files))
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

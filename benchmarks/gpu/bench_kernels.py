"""Compile, verify and time every corpus kernel x config under every partitioning strategy.

Strategies (each compiles into its own Triton cache directory, since Triton 3.6 does not key
its cache by the stages hook):

- ``none``: ws_solver drop-in, no warp specialization (the loops' tags are removed);
- ``builtin``: plain ``triton.compile``: Triton's own sm_90 path (``add_hopper_warpspec``);
- ``triton``: ws_solver drop-in, Triton's partitioner through the generic route, with the
  sm_90 stage-release fix (``ws_solver.triton.rewrites.hopper``);
- ``heuristic`` / ``optimal``: ws_solver drop-in with its heuristic / CP-SAT plans (+ fix);
- ``triton_racy`` (correctness only, expected to FAIL): the generic route without the fix;
- ``optimal_racy`` (correctness only, may FAIL): ws_solver's CP-SAT plans without the fix
  (fault injection: is the stage-release race there on this Triton's lowering?);
- ``autotune`` (asked for by name only): what ``ws_solver.triton.autotune`` picks for the
  config's own launch, tuned on this GPU with its default candidates; its builds are compiled
  in helpers first (``bench_autotune``; with --dry-run only those builds, timed).

Kernels are compiled with ``triton.compile`` from the corpus sources (the same specialization
as corpus/ttgir), each variant in its own subprocess, many at once; then the compiled kernels
are loaded from the caches in this process and launched through the corpus torch helpers.
This module is the command; the steps live beside it: ``bench_compile`` (jobs, one compile
per subprocess), ``bench_gpu`` (verify, then time in interleaved rounds), ``bench_vendor``
(the vendor references), ``bench_report`` (results.md).

    python -m benchmarks.gpu.bench_kernels --dry-run        # CPU: compile everything for sm_90
    python -m benchmarks.gpu.bench_kernels --out DIR        # GPU: verify, then time
    python -m benchmarks.gpu.bench_kernels --no-bench       # GPU: verify only (verify_gpu.py)

Writes ``results.json`` and ``results.md`` to --out; exits non-zero when a ws_solver
strategy (none/heuristic/optimal) fails to compile, verify or fell back to another strategy.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.analysis.bench_report import correlations, markdown, print_table
from benchmarks.common import archive
from benchmarks.common.bench_compile import (
    EXTRA_CONFIGS_ENV,
    add_extra_configs,
    all_jobs,
    compile_many,
)
from benchmarks.common.bench_strategies import (
    ROUNDS,
    STRATEGIES,
    VERIFY_ONLY,
    is_our_failure,
    split_strategies,
)
from benchmarks.gpu import bench_autotune
from benchmarks.gpu.bench_gpu import (
    BENCH,
    Quick,
    Sustain,
    mark_progress,
    verify_then_time,
    watchdog,
)
from corpus import kernels as corpus_kernels


# -- the run's environment ------------------------------------------------------------------
def environment(args: argparse.Namespace, gpu_here: bool = True) -> dict:
    env: dict = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "git_revision": os.environ.get("WS_GIT_REV") or archive.git_revision(),
        "python": platform.python_version(),
        "dry_run": args.dry_run,
        "timing_rounds": args.rounds,
        "sustain": (
            {
                "seconds": args.sustain,
                "rounds": args.sustain_rounds,
                "configs": args.sustain_configs,
            }
            if args.sustain > 0
            else None
        ),
    }
    try:
        import triton

        env["triton"] = triton.__version__
        env["ptxas"] = ptxas_in_use(args.capability)
    except Exception:
        pass
    if not args.dry_run and gpu_here:
        import torch

        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        props = torch.cuda.get_device_properties(0)
        env["gpu"] = torch.cuda.get_device_name(0)
        env["sms"] = props.multi_processor_count
        uuid = str(getattr(props, "uuid", "") or "") or None
        env["gpu_uuid"] = uuid
        env["gpu_serial"] = gpu_serial(uuid)
    return env


def gpu_serial(uuid: str | None) -> str | None:
    """The serial number nvidia-smi gives the GPU with this UUID (the first GPU without
    one), so that runs on one GPU can be told from runs on another; None if it cannot say."""
    query = ["nvidia-smi", "--query-gpu=serial", "--format=csv,noheader"]
    named = uuid if not uuid or uuid.startswith("GPU-") else f"GPU-{uuid}"
    for cmd in ([[*query, "-i", named]] if named else []) + [query]:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
        if out.returncode == 0 and lines and lines[0] not in ("[N/A]", "N/A"):
            return lines[0]
    return None


def ptxas_in_use(capability: int) -> dict:
    """The ptxas Triton assembles for ``capability`` with (its path and CUDA release): 3.9
    uses its CUDA 13 ptxas ("ptxas-blackwell") for sm_90 too, 3.6 its CUDA 12.8 one, and a
    TRITON_PTXAS*_PATH variable replaces either, so a run records which one it timed."""
    from triton.backends.nvidia.compiler import get_ptxas

    tool = get_ptxas(capability)
    return {"path": tool.path, "version": tool.version}


# -- main --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None, distributed: Any = None) -> int:
    """`distributed`: where compiles, verification and timing run instead of here (a
    `benchmarks.gpu.sweep_backend.Distributed`: Ray); None: here, as always."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default=",".join(corpus_kernels.KERNEL_MODULES))
    parser.add_argument(
        "--configs",
        default="",
        help="only configs whose name contains one of these (comma-separated substrings)",
    )
    parser.add_argument(
        "--strategies",
        default=",".join(STRATEGIES + VERIFY_ONLY),
        help="comma-separated bench strategies (the module docstring), plan-sweep variants "
        "(heuristic~s+1) or autotune: ws_solver.triton.autotune's choice, tuned here on the "
        "GPU (not in the default; local runs only). Default: %(default)s",
    )
    parser.add_argument(
        "--autotune-candidates",
        default=",".join(bench_autotune.DEFAULT_CANDIDATES),
        help="the autotune strategy's candidates (default, the autotuner's: %(default)s)",
    )
    parser.add_argument(
        "--autotune-rounds",
        type=int,
        default=bench_autotune.TuneSettings.rounds,
        help="the autotuner's interleaved timing rounds (its default: %(default)s)",
    )
    parser.add_argument(
        "--autotune-stop-after",
        type=float,
        default=None,
        metavar="SECONDS",
        help="tune no further config this long after the tuning starts: the configs not reached "
        "are left out of the run (all their rows), so that what was tuned is still verified and "
        "timed within a fixed window (default: tune every config)",
    )
    parser.add_argument(
        "--autotune-rep-ms",
        type=float,
        default=bench_autotune.TuneSettings.rep_ms,
        help="the autotuner's do_bench rep in ms (its default: %(default)s); --rep-ms is the "
        "bench's own timing",
    )
    parser.add_argument("--bench-kernels", default="", help="time only these kernels")
    parser.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help="interleaved timing rounds (median reported), at least; rounded up per config to "
        "a multiple of the binaries timed together, so that each takes every place in the "
        "order equally often",
    )
    parser.add_argument(
        "--sustain",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="also run the vendor reference and each variant back to back for SECONDS, with "
        "the SM clock, power and throttle state sampled (a power-capped kernel's steady "
        "state; do_bench's short bursts see a GPU below the cap). Off by default",
    )
    parser.add_argument("--sustain-rounds", type=int, default=2, metavar="N")
    parser.add_argument(
        "--sustain-configs",
        default="",
        metavar="SUBSTRING",
        help="only configs whose name contains this get the sustained timing",
    )
    parser.add_argument("--dry-run", action="store_true", help="compile for sm_90, no GPU")
    parser.add_argument("--no-bench", action="store_true", help="verify only")
    parser.add_argument(
        "--extra-configs",
        default=None,
        help="JSON {kernel: {name: config}}: configurations to explore besides the corpus's "
        "(e.g. benchmarks/gpu/ahead_configs.json); combine with --configs to run only them",
    )
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench_out")))
    parser.add_argument(
        "--what",
        default="",
        help="what this run is, for the manifest.json written to --out (the archive's format: "
        "benchmarks/results/README.md)",
    )
    parser.add_argument("--cache-root", type=Path, default=None)
    parser.add_argument(
        "--parallel",
        type=int,
        default=max(1, (os.cpu_count() or 2)),
        help="compile helpers at once (default: the CPU count; while autotune tunes on the "
        "GPU, one fewer)",
    )
    parser.add_argument("--capability", type=int, default=90)
    parser.add_argument(
        "--skip", action="append", default=[], help="JOB=reason: do not launch this variant"
    )
    parser.add_argument(
        "--only-extra", action="store_true", help="run only the --extra-configs configurations"
    )
    parser.add_argument(
        "--rep-ms",
        type=int,
        default=100,
        help="do_bench's rep per timing in ms (a sweep over many configs: e.g. 40)",
    )
    parser.add_argument("--no-vendor", action="store_true", help="time no vendor reference")
    parser.add_argument(
        "--with-stock-only",
        action="store_true",
        help="time each config once, its variants and stock's in the same rounds (no first "
        "pass without stock)",
    )
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="KERNEL=N",
        help="time KERNEL at problem size N instead of its bench size (corpus BENCH_INPUTS; "
        "e.g. gemm_tma=2048 for a launch of about one wave of 128x256 tiles); repeatable",
    )
    args = parser.parse_args(argv)
    try:
        bench_autotune.TuneSettings.from_args(args).check()
    except ValueError as e:
        parser.error(f"--autotune-*: {e}")
    for spec in args.size:
        kernel, _, n = spec.partition("=")
        if kernel not in BENCH or not n.isdigit() or int(n) <= 0:
            parser.error(f"--size {spec}: expected KERNEL=N with KERNEL one of {sorted(BENCH)}")
        BENCH[kernel] = {**BENCH[kernel], "size": int(n)}  # the dict bench_gpu reads
    added = add_extra_configs(args.extra_configs or os.environ.get(EXTRA_CONFIGS_ENV))
    args.only = set(added) if args.only_extra else None
    command = "python -m benchmarks.gpu.bench_kernels " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    return run(args, distributed, command)


def config_matches(config: str, patterns: str) -> bool:
    """Whether `config` contains one of the comma-separated `patterns` (any, when none)."""
    wanted = [p for p in patterns.split(",") if p]
    return not wanted or any(p in config for p in wanted)


def run(args: argparse.Namespace, distributed: Any, command: str) -> int:
    """Compile, then (not --dry-run) verify and time: here, or `distributed`."""

    kernels = [k for k in args.kernels.split(",") if k]
    compiled_here, tuned = split_strategies(args.strategies)
    if tuned and distributed is not None:
        raise SystemExit(f"--strategies {','.join(tuned)}: tuned on this machine's GPU only")
    jobs = [
        j
        for j in all_jobs(kernels, compiled_here + tuned)
        if config_matches(j.config, args.configs)
    ]
    if getattr(args, "only", None) is not None:
        jobs = [j for j in jobs if f"{j.kernel}.{j.config}" in args.only]
    cache_root = args.cache_root or Path(tempfile.mkdtemp(prefix="ws_bench_cache_"))
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = [
        {
            "job": j.name,
            "kernel": j.kernel,
            "config": j.config,
            "strategy": j.strategy,
            "compile": {"error": "no compile record"},
            "dry_run": args.dry_run,
        }
        for j in jobs
    ]
    env = environment(args, gpu_here=distributed is None)
    save = _saver(args.out, env, results)
    preloaded: dict = {}
    watching = False  # the watchdog: from the first GPU work on
    if any(r["strategy"] in tuned for r in results):
        env["autotune"] = bench_autotune.TuneSettings.from_args(args).to_dict()
        watching = not args.dry_run
        if watching:
            watchdog(save)
        preloaded, left_out = bench_autotune.compile_and_tune(results, cache_root, args, save)
        env["autotune"]["left_out"] = left_out
    else:
        if distributed is None:
            print(f"compiling {len(jobs)} variants ({args.parallel} at a time) into {cache_root}")
            infos = compile_many(jobs, cache_root, args.capability, args.parallel, not args.dry_run)
        else:
            print(f"compiling {len(jobs)} variants as {distributed.name} tasks into {cache_root}")
            infos = distributed.compile_all(jobs, cache_root, args)
        for row in results:
            row["compile"] = infos.get(row["job"], row["compile"])
    print(f"compiled in {time.perf_counter() - start:.0f} s", flush=True)
    save()
    if not args.dry_run:
        skip = {name: why for name, _, why in (x.partition("=") for x in args.skip) if name}
        for row in results:
            if row["job"] in skip:
                row["verify"] = {"passed": False, "why": f"not run: {skip[row['job']]}"}
    if not args.dry_run and distributed is not None:
        env["gpus"] = distributed.verify_and_time(results, skip, cache_root, args, save)
    elif not args.dry_run:
        if not watching:
            watchdog(save)
        rows = [r for r in results if r["job"] not in skip]
        # The variants of a kernel with a skipped (hung) job go last.
        rows.sort(key=lambda r: any(j.startswith(r["kernel"] + ".") for j in skip))
        bench = [k for k in (args.bench_kernels or args.kernels).split(",") if k in BENCH]
        sustain = (
            Sustain(args.sustain, args.sustain_rounds, args.sustain_configs)
            if args.sustain > 0
            else None
        )
        kernels = [] if args.no_bench else bench
        quick = Quick(args.rep_ms, not args.no_vendor, args.with_stock_only)
        verify_then_time(rows, cache_root, save, kernels, args.rounds, sustain, quick, preloaded)
    save()
    print_table(results)
    failures = [r["job"] for r in results if is_our_failure(r)]
    print(f"\n{len(results)} variants, {len(failures)} failures of ws_solver strategies")
    for name in failures:
        print(f"  FAILED {name}")
    if distributed is not None:
        env["backend"] = distributed.stats.to_dict()
        save()
        print(distributed.stats.summary())
    what = args.what or f"bench_kernels: {len(jobs)} variants of {args.kernels or 'every kernel'}"
    archive.write_manifest(args.out, what, command, env["git_revision"], env["date"][:10])
    print(f"total {time.perf_counter() - start:.0f} s; results in {args.out}")
    return 1 if failures else 0


def _saver(out: Path, env: dict, results: list[dict]):
    def save() -> None:
        mark_progress()
        corr = correlations(results)
        payload = {"environment": env, "results": results, "spearman": corr}
        (out / "results.json").write_text(json.dumps(payload, indent=1, default=str))
        (out / "results.md").write_text(markdown(env, results, corr))

    return save


if __name__ == "__main__":
    sys.exit(main())

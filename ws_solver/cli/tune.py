"""`ws-solver tune`: ws_solver.triton.autotune over the corpus kernels on this GPU; a report
per config of every candidate's time, the winner and the tuning time."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import __version__
from ..backends.local import usable_cores
from ..core import readers
from ..core.candidates import DEFAULT_CANDIDATES, REFERENCE, expand, parse
from ..core.processes import die_with_parent, python_command
from ..core.wording import count
from ..report import tune as render
from ..triton.autotuning.launcher import unavailable
from ..triton.autotuning.tuning import first_line
from .common import (
    CORPUS_EXIT_HELP,
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_SOME_FAILED,
    CliError,
    add_command,
    add_solver_arguments,
    check_folder,
    positive_float,
    positive_int,
    report,
    solve_options,
    write_output,
)
from .demo import write_folder

DEFAULT_OUT = "out/tune"
DEFAULT_JOBS = max(1, min(16, os.cpu_count() or 1))
COMPILE_TIMEOUT_S = 600  # one config's candidates, compiled in a helper process

HELP = "autotune the corpus kernels on this GPU; report every candidate's time"

DESCRIPTION = f"""\
Run ws_solver.triton.autotune over every corpus kernel x config on this GPU: per config, build
every candidate, check each against the unspecialized reference, time the ones that agree in
interleaved do_bench rounds and keep the fastest (docs/autotune.md in the source
repository). Then time every distinct candidate again, separately ("recheck"), to see how
close the choice is to the fastest. Needs a CUDA GPU, torch and a checkout of the
repository (its corpus/kernels): run `python -m ws_solver tune` from the checkout's root.

Before tuning, --jobs helper processes compile every candidate of every config in parallel
into Triton's caches (--jobs 1: compile while tuning, cold); their wall time is reported as
the cold compile time of each config.

Writes OUT/tune.md (tables) and OUT/tune.json (default OUT: {DEFAULT_OUT})."""

EPILOG = f"""\
examples:
  python -m ws_solver tune --out out/tune
  python -m ws_solver tune --kernels gemm_tma,attention_fwd --rounds 5 \\
      --candidates none,heuristic,optimal,triton,top:4,heuristic~s+1,heuristic~s-1

{CORPUS_EXIT_HELP}"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_command(subparsers, "tune", HELP, DESCRIPTION, EPILOG)
    parser.add_argument("--out", metavar="DIR", default=DEFAULT_OUT, help="report folder")
    parser.add_argument("--kernels", default="", help="comma-separated (default: all)")
    parser.add_argument("--configs", default="", help="only configs whose name contains this")
    parser.add_argument(
        "--candidates",
        default=",".join(DEFAULT_CANDIDATES),
        help="comma-separated candidate names; top:N is the model's N best plans, explore:0 "
        ".. explore:N-1 (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=positive_int, default=5, help="tuning rounds (5)")
    parser.add_argument(
        "--recheck-rounds", type=positive_int, default=5, help="rounds of the recheck (5)"
    )
    parser.add_argument("--warmup", type=positive_float, default=25, help="do_bench ms (25)")
    parser.add_argument("--rep", type=positive_float, default=100, help="do_bench ms (100)")
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"parallel compile helpers before tuning (default: {DEFAULT_JOBS}; 1: none)",
    )
    parser.add_argument(
        "--reuse-choices",
        action="store_true",
        help="use tuning choices already in the on-disk cache (default: tune afresh)",
    )
    add_solver_arguments(parser, cache=True)
    parser.add_argument("--compile-only", metavar="KERNEL:CONFIG", help=argparse.SUPPRESS)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        candidates = expand(args.candidates)
    except ValueError as e:
        raise CliError(f"--candidates: {e}", EXIT_BAD_INPUT) from None
    kernels = corpus_kernels()
    why = unavailable()
    if why is not None:
        raise CliError(f"tune needs a CUDA GPU: {why}", EXIT_BAD_INPUT)
    if args.compile_only:
        kernel, _, config = args.compile_only.partition(":")
        return compile_only(kernels, kernel, config, args)
    jobs = select(kernels, args.kernels, args.configs)
    if not jobs:
        raise CliError("no corpus config matches --kernels/--configs", EXIT_BAD_INPUT)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}") from None
    check_folder(out, ("tune.json", "tune.md"))  # before any tuning
    env = environment()
    cores = usable_cores()
    if args.jobs > cores:
        report(f"--jobs {args.jobs}: capped at the {count(cores, 'usable CPU core')}")
        args.jobs = cores
    cold = prewarm(checkout_root(kernels), jobs, args) if args.jobs > 1 else {}
    results: list[dict] = []
    for kernel, config in jobs:
        report(f"tuning {kernel} {config}")
        try:
            results.append(tune_config(kernels, kernel, config, args, cold.get((kernel, config))))
        except Exception as e:  # one config's failure is a row of the report
            results.append({"kernel": kernel, "config": config, "error": first_line(e)})
        document = tune_document(args, env, candidates, results)
        write_folder(  # after every config: a run cut short still leaves its rows
            out,
            {
                "tune.json": render.to_json(document).encode(),
                "tune.md": render.to_markdown(document).encode(),
            },
        )
    summary = render.summary_line(document["summary"])
    write_output(f"{summary}\nreport folder: {out.resolve()}\n", None)
    return EXIT_SOME_FAILED if any(r.get("error") for r in results) else EXIT_OK


def tune_document(
    args: argparse.Namespace, env: dict, candidates: tuple, results: list[dict]
) -> dict:
    return {
        "schema": "ws-solver.tune",
        "version": 1,
        "environment": env,
        "candidates": [c.name for c in candidates],
        "reference": REFERENCE.name,
        "rounds": args.rounds,
        "recheck_rounds": args.recheck_rounds,
        "jobs": args.jobs,
        "results": results,
        "summary": summarize(results),
    }


# -- the corpus ---------------------------------------------------------------------------------
def corpus_kernels() -> ModuleType:
    """``corpus.kernels``: the Triton kernels of a checkout of the repository, which an
    installed package does not hold. Importable from the checkout's root (``python -m``
    puts the current folder first on ``sys.path``) or with it on ``PYTHONPATH``."""
    try:
        import corpus.kernels as kernels
    except ImportError as e:
        raise CliError(
            f"tune needs a checkout of the repository ({e}): run `python -m ws_solver tune` "
            "from its root",
            EXIT_BAD_INPUT,
        ) from None
    return kernels


def checkout_root(kernels: ModuleType) -> Path:
    """The folder `corpus.kernels` was imported from (what the helpers need on their path)."""
    return Path(kernels.__file__).resolve().parents[2]


def select(kernels: ModuleType, names: str, configs: str) -> list[tuple[str, str]]:
    wanted = [k for k in names.split(",") if k] or list(kernels.KERNEL_MODULES)
    unknown = [k for k in wanted if k not in kernels.KERNEL_MODULES]
    if unknown:
        what = "unknown kernel" if len(unknown) == 1 else "unknown kernels"
        raise CliError(f"--kernels: {what} {', '.join(unknown)}", EXIT_BAD_INPUT)
    return [(k, c) for k in wanted for c in kernels.load(k).CONFIGS if configs in c]


def tuner_for(module: ModuleType, args: argparse.Namespace) -> Any:
    from ..triton.autotuning.autotuner import Autotuner, timer_from

    return Autotuner(
        module.KERNEL,
        module.KERNEL.arg_names,
        candidates=args.candidates,
        timer=timer_from(None, args.warmup, args.rep),
        rounds=args.rounds,
        cache_results=args.reuse_choices,
        enable_options={"solve": solve_options(args)},
    )


class Recorder:
    """Stands in for a module's KERNEL: forwards ``KERNEL[grid](...)`` to the tuner (or, with
    ``warmup``, to its warmup) and keeps the last call's arguments."""

    def __init__(self, tuner: Any, warmup: bool = False) -> None:
        self.tuner, self.warmup, self.call = tuner, warmup, None

    def __getitem__(self, grid: Any):
        def launch(*args: Any, **kwargs: Any) -> Any:
            self.call = (args, {**kwargs, "grid": grid, "warmup": self.warmup})
            if self.warmup:
                return self.tuner.warmup(*args, grid=grid, **kwargs)
            return self.tuner[grid](*args, **kwargs)

        return launch


@contextlib.contextmanager
def standing_in(module: ModuleType, stand_in: Any) -> Iterator[None]:
    original = module.KERNEL
    module.KERNEL = stand_in
    try:
        yield
    finally:
        module.KERNEL = original


# -- compiling first, in parallel ---------------------------------------------------------------
def prewarm(root: Path, jobs: list[tuple[str, str]], args: argparse.Namespace) -> dict[tuple, dict]:
    """Compile every candidate of every config in helper processes (``--compile-only``), so
    that tuning finds them in Triton's caches; per config: wall seconds or the error. The
    helpers import the corpus kernels from the checkout at `root`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), _pythonpath()])))
    shared = ["--candidates", args.candidates, "--time-limit", str(args.time_limit)]
    shared += ["--workers", str(args.workers), "--seed", str(args.seed)]
    if not args.cache:
        shared.append("--no-cache")

    def one(job: tuple[str, str]) -> dict:
        cmd = python_command(["tune", "--compile-only", ":".join(job), *shared], module="ws_solver")
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                env=env,
                timeout=COMPILE_TIMEOUT_S,
                preexec_fn=die_with_parent(),
            )
        except subprocess.TimeoutExpired:
            return {"error": f"compile helper timed out after {COMPILE_TIMEOUT_S} s"}
        wall = round(time.perf_counter() - start, 2)
        if proc.returncode != 0:
            tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
            return {"wall_s": wall, "error": f"rc {proc.returncode}: {' '.join(tail)[:300]}"}
        return {"wall_s": wall, **_last_json(proc.stdout)}

    report(
        f"compiling the candidates of {count(len(jobs), 'config')} in "
        f"{count(args.jobs, 'process', 'processes')}"
    )
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return dict(zip(jobs, pool.map(one, jobs), strict=True))


def compile_only(kernels: ModuleType, kernel: str, config: str, args: argparse.Namespace) -> int:
    module = kernels.load(kernel)
    cfg = module.CONFIGS[config]
    inputs = module.make_inputs(cfg, seed=0, **kernels.BENCH_INPUTS[kernel])
    recorder = Recorder(tuner_for(module, args), warmup=True)
    start = time.perf_counter()
    with standing_in(module, recorder):
        module.launch(cfg, inputs)
    write_output(json.dumps({"compile_s": round(time.perf_counter() - start, 2)}) + "\n", None)
    return EXIT_OK


# -- tuning one config --------------------------------------------------------------------------
def tune_config(
    kernels: ModuleType, kernel: str, config: str, args: argparse.Namespace, cold: dict | None
) -> dict:
    import torch

    from ..triton.autotuning.autotuner import last_tuning_report
    from ..triton.autotuning.tuning import time_rounds

    module = kernels.load(kernel)
    cfg = module.CONFIGS[config]
    tuner = tuner_for(module, args)
    inputs = module.make_inputs(cfg, seed=0, **kernels.BENCH_INPUTS[kernel])
    recorder = Recorder(tuner)
    with standing_in(module, recorder):
        module.launch(cfg, inputs)
    torch.cuda.synchronize()
    tuned = last_tuning_report()
    assert tuned is not None and recorder.call is not None
    if not tuned.tuned:
        raise RuntimeError(f"not tuned: {tuned.note}")
    call_args, call_kwargs = recorder.call
    timed = [c.name for c in tuned.candidates if c.status in ("timed", "untimed")]
    names = list(dict.fromkeys([*timed, tuned.winner]))
    launch = tuner.launcher.launch
    calls = {name: functools.partial(launch, parse(name), call_args, call_kwargs) for name in names}
    recheck, errors = time_rounds(tuner.timer, calls, args.recheck_rounds)
    del inputs, recorder
    torch.cuda.empty_cache()
    return config_result(kernel, config, tuned.to_dict(), recheck, errors, cold)


def config_result(
    kernel: str,
    config: str,
    tuned: dict,
    recheck: dict[str, list[float]],
    errors: dict[str, str],
    cold: dict | None,
) -> dict:
    """One row of the report: the tuning report, the recheck medians (a duplicate gets its
    twin's), how the winner compares with the fastest recheck and with none and triton."""
    medians = {name: statistics.median(ms) for name, ms in recheck.items() if ms}
    for c in tuned["candidates"]:
        if c.get("same_as") in medians:
            medians[c["name"]] = medians[c["same_as"]]
    winner = tuned["winner"]
    fastest = min(medians, key=medians.__getitem__) if medians else None
    won = medians.get(winner)
    rounds = recheck.get(winner) or []

    def versus(name: str) -> float | None:
        other = medians.get(name)
        return None if won is None or not other else won / other - 1

    return {
        "kernel": kernel,
        "config": config,
        "key": tuned["key"],
        "winner": winner,
        "winner_ms": won,
        "winner_spread": (max(rounds) - min(rounds)) / won if rounds and won else None,
        "fastest": fastest,
        "fastest_ms": medians.get(fastest) if fastest else None,
        "regret": versus(fastest) if fastest else None,
        "vs_none": versus("none"),
        "vs_triton": versus("triton"),
        "binaries": len(recheck),
        "recheck_ms": medians,
        "recheck_rounds_ms": recheck,
        "recheck_errors": errors,
        "candidates": tuned["candidates"],
        "tuning": {k: tuned[k] for k in ("total_s", "compile_s", "check_s", "bench_s")},
        "cold_compile": cold,
        "note": tuned.get("note", ""),
    }


def summarize(results: list[dict]) -> dict:
    done = [r for r in results if not r.get("error")]
    regrets = [r["regret"] for r in done if r["regret"] is not None]
    totals = [r["tuning"]["total_s"] for r in done]
    return {
        "configs": len(done),
        "failed": len(results) - len(done),
        "within_1pct": sum(1 for x in regrets if x <= 0.01),
        "max_regret": max(regrets, default=None),
        "median_tuning_s": statistics.median(totals) if totals else 0.0,
        "max_tuning_s": max(totals, default=0.0),
    }


def environment() -> dict:
    import torch
    import triton

    from ..triton.autotuning.launcher import device_name

    return {
        "device": device_name(),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "ws_solver": __version__,
        "revision": os.environ.get("WS_SOLVER_REVISION") or _git_revision(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
    }


def _git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _last_json(text: str) -> dict:
    """The helper's last stdout line, ``{"compile_s": ...}`` ({} if it printed none)."""
    for line in reversed(text.splitlines()):
        with contextlib.suppress(ValueError):
            found = readers.loads(line)
            if isinstance(found, dict):
                return found
    return {}


def _pythonpath() -> str:
    return os.environ.get("PYTHONPATH", "")

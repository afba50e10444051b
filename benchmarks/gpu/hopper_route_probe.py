"""Triton 3.6's own sm_90 route (add_hopper_warpspec), stock and driven, against ws_solver.

For every sm_90 corpus config: compile the Hopper-route variants that apply to it
(benchmarks/common/hopper_route.py) and ws_solver's ``optimal`` (the generic route), verify each
like benchmarks/gpu/verify_gpu.py (3 seeds, NaN-poisoned outputs, 10 bitwise repeats), and time
the correct ones with ``optimal`` and the vendor reference in interleaved do_bench rounds
(benchmarks/gpu/bench_kernels.py). Writes results.json and results.md to --out.

    source benchmarks/gpu/gpu_env.sh; python3 -m benchmarks.gpu.hopper_route_probe --out $OUT
    python -m benchmarks.gpu.hopper_route_probe --dry-run --out DIR   # compile only, no GPU

A kernel that never finishes stops the run (the watchdog saves what it has; the hung
variant is the one whose verification is "in_progress"); rerun with --skip JOB=why.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import archive, bench_compile, hopper_route
from benchmarks.gpu import bench_gpu
from corpus import kernels as corpus_kernels

BASELINE = "optimal"
# The route specializes only a 4-warp module: a 4-warp config is tried as it is; an 8-warp
# config as a 4-warp module with two consumer warp groups (its 8 consumer warps, split by
# the route's data partition instead of by the layouts of one 8-warp partition).
FOUR_WARP = ("hopper", "hopper~c1", "hopper~c2", "hopper~c1~plan", "hopper~c1~b2")
EIGHT_WARP = ("hopper", "hopper~c2~w4", "hopper~c2~plan~w4", "hopper~c2~b2~w4")
ROUNDS = 5


def variants_for(config: dict) -> tuple[str, ...]:
    return FOUR_WARP if config["num_warps"] == 4 else EIGHT_WARP


def route_jobs(kernels: list[str], configs: str) -> list[bench_compile.Job]:
    """The applicable Hopper-route variants of every matching config."""
    out = []
    for kernel in kernels:
        for name, config in corpus_kernels.load(kernel).CONFIGS.items():
            if configs in name:
                out += [bench_compile.Job(kernel, name, s) for s in variants_for(config)]
    return out


def compile_rows(
    todo: list[bench_compile.Job], cache_root: Path, parallel: int, launcher: bool
) -> list:
    """Compile each job in its own process (bench_compile.compile_many); one row per job."""
    infos = bench_compile.compile_many(todo, cache_root, 90, parallel, launcher)
    rows = []
    for j in todo:
        row = {"job": j.name, "kernel": j.kernel, "config": j.config, "strategy": j.strategy}
        row["compile"] = infos.get(j.name, {"error": "no compile record"})
        if hopper_route.parse(j.strategy) and not row["compile"].get("error"):
            row["structure"] = route_structure(j, cache_root)
        rows.append(row)
    return rows


def route_structure(job: bench_compile.Job, cache_root: Path) -> dict:
    """What the route built (from the cached compile's final TTGIR)."""
    compiled, _ = bench_compile.compile_job(job, cache_root)
    if compiled is None:
        return {}
    ttgir = compiled.asm.get("ttgir", "")
    return {
        **hopper_route.summary(ttgir),
        "region_ops": hopper_route.region_ops(ttgir),
        "total_warps": getattr(compiled.metadata, "num_warps", None),
        "wgmma_async": ttgir.count("ttng.warp_group_dot_wait"),
    }


def specialized(row: dict) -> bool:
    """A Hopper-route row whose compile built a warp-specialized kernel."""
    return bool((row.get("structure") or {}).get("warp_specialize_ops"))


def verified(row: dict) -> bool:
    return bool((row.get("verify") or {}).get("passed"))


def worth_running(results: list[dict], ok) -> list[dict]:
    """The Hopper-route rows for which `ok` holds, with BASELINE of their configs (a route
    row that did not specialize is Triton's unspecialized kernel: not what this probes)."""
    live = [r for r in results if r["strategy"] != BASELINE and specialized(r) and ok(r)]
    configs = {(r["kernel"], r["config"]) for r in live}
    keep = {id(r) for r in live}
    keep |= {
        id(r)
        for r in results
        if r["strategy"] == BASELINE and (r["kernel"], r["config"]) in configs
    }
    return [r for r in results if id(r) in keep]


def compile_all(
    kernels: list[str], configs: str, cache_root: Path, parallel: int, launcher: bool
) -> list[dict]:
    """The Hopper-route variants of every matching config, then BASELINE for the configs
    where the route built a specialized kernel (elsewhere there is nothing to compare, and
    the baseline's solve is the slow part of the compile). Each config's baseline comes
    first, so that it is verified first."""
    todo = route_jobs(kernels, configs)
    print(f"compiling {len(todo)} Hopper-route variants", flush=True)
    results = compile_rows(todo, cache_root, parallel, launcher)
    live = dict.fromkeys((r["kernel"], r["config"]) for r in results if specialized(r))
    print(f"compiling {BASELINE} for {len(live)} configs", flush=True)
    base = compile_rows(
        [bench_compile.Job(k, c, BASELINE) for k, c in live], cache_root, parallel, launcher
    )
    first = {(r["kernel"], r["config"]): r for r in base}
    ordered = []
    for row in results:
        head = first.pop((row["kernel"], row["config"]), None)
        ordered += [head, row] if head else [row]
    return ordered


def verify_and_time(results: list[dict], cache_root: Path, skip: dict, rounds: int, save) -> None:
    """Verify the specialized route rows and their baselines (bench_gpu.verify_all),
    then time the correct ones per kernel in interleaved rounds (bench_gpu.bench_kernel)."""
    bench_gpu.watchdog(save)
    for row in results:
        if row["job"] in skip:
            row["verify"] = {"passed": False, "why": f"not run: {skip[row['job']]}"}
    runnable = worth_running(results, lambda r: r["job"] not in skip)
    compiled = bench_gpu.verify_all(runnable, cache_root, save)
    timed = worth_running(runnable, verified)
    for kernel in dict.fromkeys(r["kernel"] for r in timed):
        print(f"timing {kernel}", flush=True)
        bench_gpu.bench_kernel(kernel, compiled, timed, rounds)
        save()
    compare(results)


def timing(row: dict) -> dict:
    bench = row.get("bench") or {}
    rounds = bench.get("ms_rounds") or []
    if not rounds:
        return {"error": bench.get("error") or bench.get("failed")} if bench else {}
    ms = statistics.median(rounds)
    return {
        "ms": ms,
        "spread": (max(rounds) - min(rounds)) / ms,
        "rate": bench.get("rate"),
        "unit": bench.get("unit"),
        "same_binary_as": bench.get("same_binary_as"),
        "failed": bench.get("failed"),
    }


def compare(results: list[dict]) -> None:
    """Each timed row's speed against BASELINE of the same config (ms ratio; >1 is faster),
    and whether the difference is beyond both rows' spreads."""
    base = {(r["kernel"], r["config"]): timing(r) for r in results if r["strategy"] == BASELINE}
    for row in results:
        t, b = timing(row), base.get((row["kernel"], row["config"]), {})
        if t.get("ms") and b.get("ms") and row["strategy"] != BASELINE:
            speedup = b["ms"] / t["ms"]
            noise = max(t["spread"], b["spread"])
            row["versus_baseline"] = {
                "speedup": speedup,
                "beyond_spread": abs(speedup - 1) > noise,
            }


def _cell_compile(row: dict) -> str:
    c = row.get("compile") or {}
    if c.get("error"):
        return "**crash**: " + c["error"].replace("|", "/")[:140]
    s = row.get("structure") or {}
    if not s:
        return "compiled"
    warps = c.get("partition_warps") or []
    ws = s.get("warp_specialize_ops", 0)
    shape = f"{s.get('regions', 0)} regions, {s.get('total_warps')} warps" if ws else "not WS"
    if not ws:
        return shape
    depth = ",".join(map(str, s.get("buffer_depths") or [])) or "-"
    return f"{shape}; partitions {warps}; buffers {depth}"


def _cell_verify(row: dict) -> str:
    v = row.get("verify")
    if not v:
        return ""
    if v.get("passed"):
        return f"ok ({v.get('max_rel_err', 0):.1e})"
    return "FAIL: " + str(v.get("why", ""))[:100].replace("|", "/")


def markdown(env: dict, results: list[dict]) -> str:
    lines = [
        "# Triton's Hopper route (add_hopper_warpspec) against ws_solver's optimal",
        "",
        f"{env.get('gpu') or 'no GPU (dry run)'}; Triton {env.get('triton')}; "
        f"revision {env.get('git')}; {env.get('rounds')} interleaved rounds.",
        "",
        "| config | variant | compile | verify | ms (spread) | vs optimal |",
        "|---|---|---|---|---|---|",
    ]
    for row in results:
        t, vs = timing(row), row.get("versus_baseline") or {}
        ms = f"{t['ms']:.3f} ({t['spread']:.1%})" if t.get("ms") else (t.get("error") or "")
        if t.get("failed"):
            ms += f"; {t['failed']}"
        ratio = ""
        if vs:
            ratio = f"{vs['speedup']:.3f}×" + (" *" if vs["beyond_spread"] else "")
        lines.append(
            f"| {row['kernel']}.{row['config']} | {row['strategy']} | {_cell_compile(row)} "
            f"| {_cell_verify(row)} | {ms} | {ratio} |"
        )
    lines += ["", "`*`: the difference is larger than both rows' spreads ((max − min) / median)."]
    return "\n".join(lines) + "\n"


def environment(args: argparse.Namespace) -> dict:
    import triton

    git = os.environ.get("WS_GIT_REV") or archive.git_revision()
    env = {"triton": triton.__version__, "git": git, "rounds": args.rounds}
    env["date"] = datetime.date.today().isoformat()
    env["dry_run"] = args.dry_run
    if not args.dry_run:
        import torch

        env["gpu"] = torch.cuda.get_device_name(0)
        env["torch"] = torch.__version__
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", default=",".join(corpus_kernels.KERNEL_MODULES))
    parser.add_argument("--configs", default="", help="only configs whose name contains this")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--dry-run", action="store_true", help="compile for sm_90 only")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "hopper_out")))
    parser.add_argument("--parallel", type=int, default=max(1, os.cpu_count() or 2))
    parser.add_argument("--skip", action="append", default=[], help="JOB=reason")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    cache_root = Path(tempfile.mkdtemp(prefix="ws_hopper_cache_"))
    kernels = [k for k in args.kernels.split(",") if k]
    results = compile_all(kernels, args.configs, cache_root, args.parallel, not args.dry_run)
    print(f"compiled in {time.perf_counter() - start:.0f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    env = environment(args)

    def save() -> None:
        bench_gpu.mark_progress()
        data = {"environment": env, "results": results}
        (args.out / "results.json").write_text(json.dumps(data, indent=1, default=str))
        (args.out / "results.md").write_text(markdown(env, results))

    save()
    if not args.dry_run:
        skip = dict(x.split("=", 1) for x in args.skip if "=" in x)
        verify_and_time(results, cache_root, skip, args.rounds, save)
    save()
    print(markdown(env, results))
    what = "Triton 3.6's Hopper route (add_hopper_warpspec), stock and driven, " + (
        "compiled for sm_90 (dry run)" if args.dry_run else "verified and timed against optimal"
    )
    command = "python -m benchmarks.gpu.hopper_route_probe " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    archive.write_manifest(args.out, what, command, env["git"], env["date"])
    print(f"total {time.perf_counter() - start:.0f} s; results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

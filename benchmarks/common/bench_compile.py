"""Compiling the bench's variants: one corpus kernel x config x strategy per job, each in its
own subprocess (a crashing compile takes only itself down) and its strategy's Triton cache.

Each strategy compiles into its own cache directory, since Triton 3.6 does not key its cache
by the stages hook. ``python -m benchmarks.common.bench_compile KERNEL CONFIG STRATEGY`` is the
child process ``compile_in_subprocess`` runs; it writes the job's compile record to ``--json-out``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import hopper_route, variants
from benchmarks.common.bench_strategies import DROPIN, DROPIN_SETTINGS, UNFIXED
from corpus import kernels as corpus_kernels
from ws_solver.triton.toolchain.versions import stages_hook

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPILE_TIMEOUT_S = 60  # normal compiles take < 15 s; a hung pass is reported


@dataclass(frozen=True)
class Job:
    kernel: str
    config: str
    strategy: str

    @property
    def name(self) -> str:
        return f"{self.kernel}.{self.config}.{self.strategy}"


def all_jobs(kernels: list[str], strategies: list[str]) -> list[Job]:
    return [
        Job(k, c, s) for k in kernels for c in corpus_kernels.load(k).CONFIGS for s in strategies
    ]


# -- extra configurations ------------------------------------------------------------------------
EXTRA_CONFIGS_ENV = "WS_BENCH_EXTRA_CONFIGS"


def add_extra_configs(path: str | os.PathLike | None) -> list[str]:
    """Merge configurations to explore ({kernel: {name: config}} in a JSON file) into the
    corpus modules' CONFIGS for this process and its compile helpers; returns 'kernel.name's."""
    if not path:
        return []
    extra = json.loads(Path(path).read_text())
    added = []
    for kernel, configs in extra.items():
        module = corpus_kernels.load(kernel)
        for name, config in configs.items():
            if name in module.CONFIGS and module.CONFIGS[name] != config:
                raise SystemExit(f"{path}: {kernel}.{name} differs from the corpus config")
            module.CONFIGS[name] = config
            added.append(f"{kernel}.{name}")
    os.environ[EXTRA_CONFIGS_ENV] = str(Path(path).resolve())
    return added


# -- compiling ---------------------------------------------------------------------------------
def make_source(kernel: str, config_name: str) -> Any:
    """The ASTSource corpus/dump.py compiles: same signature, constexprs and hints."""
    from corpus.dump import ast_source

    return ast_source(kernel, corpus_kernels.load(kernel).CONFIGS[config_name])


@contextlib.contextmanager
def strategy_scope(strategy: str, cache_root: Path) -> Iterator[None]:
    """Install the strategy's stages hook and Triton cache directory for the block."""
    from triton import knobs

    variant = variants.parse(strategy)
    if strategy in DROPIN or variant is not None:
        import ws_solver.triton as wst

        if variant is not None:
            name, options = variant.plan, variant.enable_keywords()
        else:
            name, options = DROPIN_SETTINGS[strategy]
        with _hopper_fix_off(strategy in UNFIXED):
            wst.enable(name, cache_dir=cache_root / strategy, **options)
            try:
                yield
            finally:
                wst.disable()
        return
    with knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = str(cache_root / strategy)
        hopper = hopper_route.parse(strategy)
        if strategy == "builtin":
            knobs.runtime.add_stages_inspection_hook = None
        elif hopper is not None:
            knobs.runtime.add_stages_inspection_hook = hopper_route.install(hopper)
        elif strategy == "triton_racy":
            knobs.runtime.add_stages_inspection_hook = stages_hook(_racy_hook, "triton_racy")
        else:
            raise ValueError(f"unknown strategy {strategy!r}")
        yield


@contextlib.contextmanager
def _hopper_fix_off(off: bool) -> Iterator[None]:
    """While `off`, the drop-in finds the sm_90 stage-release fix unavailable (and says so in
    its notes), so its plans lower without it."""
    from ws_solver.triton.rewrites import chain as rewrites

    if not off:
        yield
        return
    saved = rewrites.hopper_fix
    rewrites.hopper_fix = lambda: None
    try:
        yield
    finally:
        rewrites.hopper_fix = saved


def _racy_hook(backend: Any, stages: dict, options: Any, language: Any, capability: int) -> None:
    """The generic route with Triton's partitioner and no release fix (what 3.6 does)."""
    from ws_solver.triton.toolchain.make_ttgir import make_ttgir_stage

    if capability >= 90 and "ttgir" in stages:
        stages["ttgir"] = make_ttgir_stage(lambda text: text, options, capability)


def compile_job(job: Job, cache_root: Path, capability: int = 90) -> tuple[Any, dict]:
    """Compile (or load from the strategy's cache) one variant: (CompiledKernel | None, info)."""
    import triton
    from triton.backends.compiler import GPUTarget

    module = corpus_kernels.load(job.kernel)
    config = module.CONFIGS[job.config]
    info: dict = {"job": job.name, "kernel": job.kernel, "config": job.config}
    info["strategy"] = job.strategy
    variant = variants.parse(job.strategy)
    options = corpus_kernels.options(config)
    if variant is not None and variant.stage_delta:
        options["num_stages"] = variant.num_stages(config["num_stages"])
    start = time.perf_counter()
    compiled = None
    with strategy_scope(job.strategy, cache_root):
        try:
            compiled = triton.compile(
                make_source(job.kernel, job.config),
                target=GPUTarget("cuda", capability, 32),
                options=options,
            )
        except Exception as e:
            info["error"] = first_error_line(e)
        if job.strategy in DROPIN or variant is not None:
            import ws_solver.triton as wst

            report = wst.last_compile_report()
            if report is not None:
                info["dropin"] = dropin_summary(report.to_dict())
    info["compile_s"] = round(time.perf_counter() - start, 2)
    if compiled is not None:
        info.update(describe(compiled))
    return compiled, info


def dropin_summary(report: dict) -> dict:
    """What a row keeps of the drop-in's compile report (``CompileReport.to_dict``)."""
    return {
        "strategy_used": report.get("strategy_used"),
        "fallbacks": [
            {"strategy": f.get("strategy"), "reason": str(f.get("reason", ""))[:300]}
            for f in report.get("fallbacks", [])
        ],
        "loops": [
            {
                k: loop.get(k)
                for k in (
                    "loop",
                    "specialized",
                    "reason",
                    "ii",
                    "objective",
                    "status",
                    "ops",
                    "cost",
                    "rank",
                    "alternatives",
                )
                if k in loop
            }
            | {"partitions": len(loop.get("partitions", []) or []), "plan": loop.get("plan")}
            for loop in report.get("loops", [])
        ],
        "lowered": report.get("lowered", []),
        "notes": report.get("notes", [])[:10],
        "setmaxnreg": report.get("setmaxnreg"),
        "decision": report.get("decision", {}),
    }


def describe(compiled: Any) -> dict:
    """Warps, shared memory, warp_specialize ops/partitions and a static release check."""
    from ws_solver.triton.rewrites.hopper import check_releases

    md = compiled.metadata
    ttgir = compiled.asm.get("ttgir", "")
    out = {
        "num_warps": getattr(md, "num_warps", None),
        "num_stages": getattr(md, "num_stages", None),
        "shared_bytes": getattr(md, "shared", None),
        "warp_specialize_ops": ttgir.count("ttg.warp_specialize("),
        "partition_regions": len(re.findall(r"^\s*partition\d+\(", ttgir, re.MULTILINE)),
        "partition_warps": [
            int(w) for w in re.findall(r"^\s*partition\d+\(.*num_warps\((\d+)\)", ttgir, re.M)
        ],
        "requested_registers": re.findall(r"requestedRegisters = array<i32: ([\d, ]*)>", ttgir),
        "binary": binary_digest(compiled),
    }
    try:
        races = check_releases(ttgir) if "ttng.warp_group_dot" in ttgir else []
        out["static_races"] = len(races)
        out["static_race_example"] = races[0] if races else ""
    except Exception as e:  # the checker reads our own parser's view of Triton's text
        out["static_races"] = None
        out["static_race_example"] = f"checker failed: {first_error_line(e)}"
    return out


def binary_digest(compiled: Any) -> str | None:
    """Names the cubin: variants with the same digest run the same machine code."""
    cubin = compiled.asm.get("cubin")
    return hashlib.sha256(cubin).hexdigest()[:16] if isinstance(cubin, bytes) else None


def first_error_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln for ln in text.splitlines() if "error:" in ln] or text.splitlines() or [""]
    return f"{type(e).__name__}: {lines[0].strip()[:300]}"


def build_launcher(compiled: Any, cache_root: Path) -> None:
    """Build the C launcher into one shared cache (it does not depend on the strategy)."""
    from triton import knobs

    with knobs.cache.scope():
        knobs.cache.dir = str(cache_root / "launchers")
        compiled._init_handles()


def compile_order(jobs: list[Job]) -> list[Job]:
    """The slowest compiles (optimal's solves) first."""
    return sorted(jobs, key=lambda j: (j.strategy != "optimal", j.kernel, j.config))


def compile_many(
    jobs: list[Job], cache_root: Path, capability: int, parallel: int, build_launcher: bool
) -> dict[str, dict]:
    """Compile each job in its own subprocess (a crashing compile takes only itself down)."""

    def one(job: Job) -> dict:
        return compile_in_subprocess(job, cache_root, capability, build_launcher)

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        infos = list(pool.map(one, compile_order(jobs)))
    return {i["job"]: i for i in infos}


def compile_in_subprocess(
    job: Job, cache_root: Path, capability: int, build_launcher: bool
) -> dict:
    """This module's `main` in a child process: the job's compile record."""
    with tempfile.TemporaryDirectory(prefix="ws_bench_compile_") as workdir:
        out = Path(workdir) / f"{job.name}.json"
        cmd = [sys.executable, "-m", "benchmarks.common.bench_compile", job.kernel]
        cmd += [job.config, job.strategy, "--cache-root", str(cache_root)]
        cmd += ["--capability", str(capability), "--json-out", str(out)]
        if build_launcher:
            cmd.append("--build-launcher")
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, cwd=REPO_ROOT
            )
        except subprocess.TimeoutExpired:
            return {"job": job.name, "error": f"compile timed out after {COMPILE_TIMEOUT_S} s"}
        if out.exists():
            return json.loads(out.read_text())
        tail = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()][-3:]
        return {
            "job": job.name,
            "error": f"compile process died (rc {proc.returncode}): {' | '.join(tail)[:400]}",
            "compile_s": round(time.perf_counter() - start, 2),
        }


def main(argv: list[str] | None = None) -> int:
    """The child process of `compile_in_subprocess`: compile one job, write its record."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("kernel", help="a corpus kernel (corpus/kernels)")
    parser.add_argument(
        "config", help="one of its CONFIGS, or an extra one (WS_BENCH_EXTRA_CONFIGS)"
    )
    parser.add_argument("strategy", help="a bench strategy (bench_strategies.py) or a variant")
    parser.add_argument("--cache-root", required=True, help="the strategies' Triton caches")
    parser.add_argument("--capability", type=int, default=90)
    parser.add_argument("--json-out", required=True, help="where the compile record goes")
    parser.add_argument("--build-launcher", action="store_true", help="also build the launcher")
    args = parser.parse_args(argv)
    add_extra_configs(os.environ.get(EXTRA_CONFIGS_ENV))
    job = Job(args.kernel, args.config, args.strategy)
    compiled, info = compile_job(job, Path(args.cache_root), args.capability)
    if compiled is not None and args.build_launcher:
        try:
            build_launcher(compiled, Path(args.cache_root))
            info["n_regs"] = getattr(compiled, "n_regs", None)
            info["n_spills"] = getattr(compiled, "n_spills", None)
        except Exception as e:
            info["launcher_error"] = first_error_line(e)
    Path(args.json_out).write_text(json.dumps(info, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

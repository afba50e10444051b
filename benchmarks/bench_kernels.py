"""Compile, verify and time every corpus kernel x config under every partitioning strategy.

Strategies (each compiles into its own Triton cache directory, since Triton 3.6 does not key
its cache by the stages hook):

- ``none``: ws_solver drop-in, no warp specialization (the loops' tags are removed);
- ``builtin``: plain ``triton.compile``: Triton's own sm_90 path (``add_hopper_warpspec``);
- ``triton``: ws_solver drop-in, Triton's partitioner through the generic route, with the
  sm_90 stage-release fix (``ws_solver.triton.hopper``);
- ``heuristic`` / ``optimal``: ws_solver drop-in with its heuristic / CP-SAT plans (+ fix);
- ``triton_racy`` (correctness only, expected to FAIL): the generic route without the fix;
- ``optimal_racy`` (correctness only, may FAIL): ws_solver's CP-SAT plans without the fix
  (fault injection: is the stage-release race there on this Triton's lowering?).

Kernels are compiled with ``triton.compile`` from the corpus sources (the same specialization
as corpus/ttgir), each variant in its own subprocess, many at once; then the compiled kernels
are loaded from the caches in this process and launched through the corpus torch helpers.

    python -m benchmarks.bench_kernels --dry-run        # CPU: compile everything for sm_90
    python -m benchmarks.bench_kernels --out DIR        # GPU: verify, then time
    python -m benchmarks.bench_kernels --no-bench       # GPU: verify only (verify_gpu.py)

Writes ``results.json`` and ``results.md`` to --out; exits non-zero when a ws_solver
strategy (none/heuristic/optimal) fails to compile, verify or fell back to another strategy.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import against_stock, archive, hopper_route, variants, verify_gpu
from benchmarks.bench_strategies import (
    DESCRIPTION,
    DROPIN,
    DROPIN_SETTINGS,
    EXPERIMENTAL,
    OURS,
    STRATEGIES,
    UNFIXED,
    VERIFY_ONLY,
    is_our_failure,
    status_of,
)
from benchmarks.stats import spearman
from corpus import kernels as corpus_kernels
from ws_solver.triton.tuning import balanced_orders
from ws_solver.triton.versions import stages_hook

REPO_ROOT = Path(__file__).resolve().parent.parent

BENCH = corpus_kernels.BENCH_INPUTS  # sizes that fill the H200 (make_inputs arguments)
TARGETS = {"gemm": 0.95, "attention_fwd": 1.0}  # ratio to the vendor reference to beat
ROUNDS = 3  # interleaved timing passes per config (bench_kernel); the median is reported
COMPILE_TIMEOUT_S = 60  # normal compiles take < 15 s; a hung pass is reported
STALL_S = 60  # no progress for this long: save what we have and exit (a hung kernel)


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
    from ws_solver.triton import rewrites

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
    from ws_solver.triton.make_ttgir import make_ttgir_stage

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
            info["error"] = _first_error_line(e)
        if job.strategy in DROPIN or variant is not None:
            import ws_solver.triton as wst

            report = wst.last_compile_report()
            if report is not None:
                info["dropin"] = _dropin_summary(report.to_dict())
    info["compile_s"] = round(time.perf_counter() - start, 2)
    if compiled is not None:
        info.update(describe(compiled))
    return compiled, info


def _dropin_summary(report: dict) -> dict:
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
    }


def describe(compiled: Any) -> dict:
    """Warps, shared memory, warp_specialize ops/partitions and a static release check."""
    from ws_solver.triton.hopper import check_releases

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
        out["static_race_example"] = f"checker failed: {_first_error_line(e)}"
    return out


def binary_digest(compiled: Any) -> str | None:
    """Names the cubin: variants with the same digest run the same machine code."""
    cubin = compiled.asm.get("cubin")
    return hashlib.sha256(cubin).hexdigest()[:16] if isinstance(cubin, bytes) else None


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
) -> None:
    """Verify `rows` and time those of `kernels`. Triton's built-in path goes last, since it
    can hang (a deadlocked kernel ends the process; what came before is saved); then each
    config is timed again with stock's variants in the same rounds (`timed_with_stock`)."""
    early = [r for r in rows if r["strategy"] != "builtin"]
    late = [r for r in rows if r["strategy"] == "builtin"]
    compiled: dict = {}
    for phase in (early, late):
        compiled.update(_verify_all(phase, cache_root, save))
        timed = phase if phase is early else timed_with_stock(early, late)
        for kernel in kernels:
            print(f"timing {kernel}", flush=True)
            bench_kernel(kernel, compiled, timed, rounds, sustain)
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


def _first_error_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln for ln in text.splitlines() if "error:" in ln] or text.splitlines() or [""]
    return f"{type(e).__name__}: {lines[0].strip()[:300]}"


def _build_launcher(compiled: Any, cache_root: Path) -> None:
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
    """`--compile-one` of this module in a child process: the job's compile record."""
    with tempfile.TemporaryDirectory(prefix="ws_bench_compile_") as workdir:
        out = Path(workdir) / f"{job.name}.json"
        cmd = [sys.executable, "-m", "benchmarks.bench_kernels", "--compile-one", job.kernel]
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


def _compile_one_main(args: argparse.Namespace) -> int:
    kernel, config, strategy = args.compile_one
    job = Job(kernel, config, strategy)
    compiled, info = compile_job(job, Path(args.cache_root), args.capability)
    if compiled is not None and args.build_launcher:
        try:
            _build_launcher(compiled, Path(args.cache_root))
            info["n_regs"] = getattr(compiled, "n_regs", None)
            info["n_spills"] = getattr(compiled, "n_spills", None)
        except Exception as e:
            info["launcher_error"] = _first_error_line(e)
    Path(args.json_out).write_text(json.dumps(info, default=str))
    return 0


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


# -- vendor references -------------------------------------------------------------------------
def kernel_work(kernel: str, config: dict, inputs: dict) -> tuple[float, str]:
    """(operations or bytes, unit) of one launch: FLOP for matmul kernels, bytes otherwise."""
    if kernel.startswith("gemm"):
        a, c = inputs["a"], inputs["c"]
        return 2.0 * a.shape[0] * c.shape[1] * a.shape[1], "TFLOP/s"
    if kernel == "attention_fwd":
        z, h, n, d = inputs["q"].shape
        return 4.0 * z * h * n * n * d * (0.5 if inputs["causal"] else 1.0), "TFLOP/s"
    if kernel == "attention_bwd":
        z, h, n, d = inputs["q"].shape
        return 8.0 * z * h * n * n * d, "TFLOP/s"  # dK, dV: four N x N x D products
    if kernel == "row_reduce":
        x = inputs["x"]
        return float(x.numel() * x.element_size() + x.shape[0] * 4), "GB/s"
    raise KeyError(kernel)


def vendor(kernel: str, config: dict, inputs: dict) -> dict | None:
    """The vendor-library reference for the same problem: fn, its work, label, output."""
    import torch
    import torch.nn.functional as F

    if kernel in ("gemm_tma", "gemm_persistent"):
        a, b = inputs["a"], inputs["b"]
        return {"fn": lambda: a @ b.T, "label": "cuBLAS (torch.matmul fp16)"}
    if kernel == "gemm_pointer":
        a, b = inputs["a"], inputs["b"]
        return {"fn": lambda: a @ b, "label": "cuBLAS (torch.matmul fp16)"}
    if kernel in ("gemm_fp8", "gemm_cond_reset"):
        a, b = inputs["a"], inputs["b"]
        sa, sb = inputs["a_scale"], inputs["b_scale"]
        sa = (sa[:, :1] if sa.dim() == 2 else sa[:, None]).float().contiguous()
        sb = (sb[:, 0] if sb.dim() == 2 else sb)[None, :].float().contiguous()

        def fn():
            return torch._scaled_mm(a, b.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        label = "torch._scaled_mm fp8 row-wise"
        if kernel == "gemm_cond_reset":
            label += " (proxy: no per-K-group scales)"
        return {"fn": fn, "label": label}
    if kernel == "gemm_grouped":
        a, b, n = inputs["a"], inputs["b"], inputs["c"].shape[1]
        bounds, start = [], 0
        for g, count in enumerate(inputs["counts"]):
            bounds.append((a[start : start + count], b[g * n : (g + 1) * n]))
            start += count
        return {
            "fn": lambda: [x @ w.T for x, w in bounds],
            "label": "cuBLAS, one torch.matmul per group",
        }
    if kernel == "attention_fwd":
        q, k, v = inputs["q"], inputs["k"], inputs["v"]
        causal, scale = inputs["causal"], inputs["sm_scale"]

        def sdpa():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

        return {"fn": sdpa, "label": "torch SDPA", "alternatives": _sdpa_backends(sdpa)}
    if kernel == "attention_bwd":
        q, k, v = (inputs[x].detach().requires_grad_() for x in ("q", "k", "v"))
        out = F.scaled_dot_product_attention(q, k, v, scale=inputs["sm_scale"])
        do = inputs["do"]
        z, h, n, d = q.shape
        return {
            "fn": lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True),
            "label": "torch SDPA backward (dQ, dK, dV; proxy)",
            "work": 10.0 * z * h * n * n * d,
        }
    if kernel == "row_reduce":
        x, eps = inputs["x"], inputs["eps"]
        return {
            "fn": lambda: torch.rsqrt(
                torch.linalg.vector_norm(x, dim=1, dtype=torch.float32) ** 2 / x.shape[1] + eps
            ),
            "label": "torch (vector_norm + rsqrt)",
        }
    return None


def _sdpa_backends(sdpa: Any) -> dict[str, Any]:
    """SDPA pinned to each fused backend, to say which one the default picked and how the
    kernels compare with FlashAttention-2 (the flash backend) and cuDNN separately."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def pinned(backend: Any) -> Any:
        def fn() -> Any:
            with sdpa_kernel(backend):
                return sdpa()

        return fn

    return {
        "SDPA flash backend (FlashAttention-2)": pinned(SDPBackend.FLASH_ATTENTION),
        "SDPA cuDNN backend": pinned(SDPBackend.CUDNN_ATTENTION),
    }


def _time_alternatives(ref: dict, work: float, scale: float) -> dict[str, dict]:
    """Rates of the reference's alternative implementations; an error names why one is missing."""
    from triton.testing import do_bench

    found = {}
    for label, fn in ref.get("alternatives", {}).items():
        try:
            fn()
            ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
            found[label] = {"ms": ms, "rate": ref.get("work", work) * scale / (ms * 1e-3)}
        except Exception as e:
            found[label] = {"error": _first_error_line(e)}
    return found


# -- timing ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sustain:
    """Back-to-back timing with the GPU sampled (benchmarks/gpu_power.py), for the configs
    whose name contains `configs`: `seconds` per variant, in `rounds` interleaved rounds."""

    seconds: float
    rounds: int = 2
    configs: str = ""


def bench_kernel(
    kernel: str,
    compiled: dict[tuple[str, str], Any],
    results: list[dict],
    rounds: int = ROUNDS,
    sustain: Sustain | None = None,
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

    def timed(fn: Any) -> float:
        return do_bench(fn, warmup=25, rep=100, return_mode="median")

    module = corpus_kernels.load(kernel)
    spec = BENCH[kernel]
    names = verify_gpu.outputs_of(kernel)
    for config_name, config in module.CONFIGS.items():
        rows = [r for r in results if r["kernel"] == kernel and r["config"] == config_name]
        timed_strategies = STRATEGIES + EXPERIMENTAL
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
        _progress[0] = time.monotonic()
        kwargs = {k: v for k, v in spec.items() if k != "size"}
        inputs = module.make_inputs(config, spec["size"], 1234, **kwargs)
        work, unit = kernel_work(kernel, config, inputs)
        scale = 1e-12 if unit == "TFLOP/s" else 1e-9
        ref = vendor(kernel, config, inputs)
        vendor_row: dict = {"label": ref["label"] if ref else "none"}
        vendor_out = None
        if ref is not None:
            try:
                vendor_out = ref["fn"]()
            except Exception as e:
                vendor_row["error"] = _first_error_line(e)
        check = _bench_check(kernel, module, inputs, vendor_out)

        def launch(config=config, inputs=inputs) -> Any:
            return module.launch(config, inputs)

        runnable = []
        for row in todo:
            _progress[0] = time.monotonic()
            with bound(module, compiled[(row["job"], "kernel")]):
                try:
                    verify_gpu.poison(inputs, names)
                    out = verify_gpu.as_tuple(launch())
                    torch.cuda.synchronize()
                    err = check(out)
                except Exception as e:
                    row["bench"] = {"error": _first_error_line(e), "vendor": vendor_row}
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
                _progress[0] = time.monotonic()
                with bound(module, compiled[(row["job"], "kernel")]):
                    try:
                        row["bench"]["ms_rounds"].append(timed(launch))
                    except Exception as e:
                        row["bench"] = {"error": _first_error_line(e), "vendor": vendor_row}
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
                vendor_row["alternatives"] = _time_alternatives(ref, work, scale)
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

    from benchmarks import gpu_power

    kernels = {row["job"]: compiled[(row["job"], "kernel")] for row in to_time}
    runs = {VENDOR: ref["fn"], **dict.fromkeys(kernels, launch)}

    def scope(name: str) -> contextlib.AbstractContextManager:
        return bound(module, kernels[name]) if name in kernels else contextlib.nullcontext()

    def progress(name: str, row: dict) -> None:
        _progress[0] = time.monotonic()

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


# -- statistics --------------------------------------------------------------------------------
def modeled_ii(row: dict) -> int | None:
    loops = (row.get("compile") or {}).get("dropin", {}).get("loops") or []
    iis = [loop.get("ii") for loop in loops if isinstance(loop.get("ii"), (int, float))]
    return sum(iis) if iis else None


def correlations(results: list[dict]) -> dict[str, dict]:
    """Spearman of modeled II vs measured time within each config, over its distinct binaries
    of ws_solver's strategies (strategies that share a cubin are one point), with no
    normalization: II is per iteration of a config's own loop, so configs are not pooled.
    `distinct_ii` bounds what the statistic can say (few values mean many ties); `raw` pools
    a kernel's configs unscaled, for reference only."""
    out = {}
    for kernel in sorted({r["kernel"] for r in results}):
        rows = [
            r
            for r in results
            if r["kernel"] == kernel
            and r["strategy"] in OURS
            and "ms" in (r.get("bench") or {})
            and modeled_ii(r)
        ]
        binaries: dict[tuple[str, str], dict] = {}
        for r in rows:
            binaries.setdefault(
                (r["config"], (r.get("compile") or {}).get("binary") or r["job"]), r
            )
        points = list(binaries.values())
        configs = {}
        for config in sorted({r["config"] for r in points}):
            mine = [r for r in points if r["config"] == config]
            iis = [modeled_ii(r) for r in mine]
            configs[config] = {
                "points": len(mine),
                "distinct_ii": len(set(iis)),
                "spearman": spearman(iis, [r["bench"]["ms"] for r in mine]),
            }
        out[kernel] = {
            "points": len(points),
            "configs": configs,
            "raw": spearman([modeled_ii(r) for r in points], [r["bench"]["ms"] for r in points]),
        }
    return out


# -- reporting ---------------------------------------------------------------------------------
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
        env["gpu"] = torch.cuda.get_device_name(0)
        env["sms"] = torch.cuda.get_device_properties(0).multi_processor_count
    return env


def ptxas_in_use(capability: int) -> dict:
    """The ptxas Triton assembles for ``capability`` with (its path and CUDA release): 3.9
    uses its CUDA 13 ptxas ("ptxas-blackwell") for sm_90 too, 3.6 its CUDA 12.8 one, and a
    TRITON_PTXAS*_PATH variable replaces either, so a run records which one it timed."""
    from triton.backends.nvidia.compiler import get_ptxas

    tool = get_ptxas(capability)
    return {"path": tool.path, "version": tool.version}


def _fmt(x: Any, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return "inf" if math.isinf(x) else format(x, spec)
    return str(x)


def markdown(env: dict, results: list[dict], corr: dict) -> str:
    lines = [
        f"# GPU results {env['date']}",
        "",
        f"- GPU: {env.get('gpu', '(dry run, no GPU)')}; SMs: {env.get('sms', '-')}",
        f"- Triton {env.get('triton')}, torch {env.get('torch', '-')}, CUDA {env.get('cuda', '-')},"
        f" Python {env['python']}",
        f"- git revision measured: {env['git_revision']}",
        "- strategies: " + "; ".join(f"`{k}`: {v}" for k, v in DESCRIPTION.items()),
        f"- timing: {env.get('timing_rounds', ROUNDS)} or more interleaved rounds per config"
        " (a multiple of the binaries timed), each starting one variant later, median;"
        " variants with identical cubins are timed once (spread column: `= strategy`)",
        *_sustain_header(env.get("sustain")),
        "",
        "## Correctness",
        "",
        "| kernel | config | strategy | status | max rel err (3 seeds) | repeat diffs |"
        " warps | WS ops / partitions | static races | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        comp = r.get("compile") or {}
        ver = r.get("verify") or {}
        notes = comp.get("error") or ver.get("why") or ""
        fb = (comp.get("dropin") or {}).get("fallbacks") or []
        if fb and not notes:
            notes = f"{fb[0]['strategy']}: {fb[0]['reason']}"
        lines.append(
            f"| {r['kernel']} | {r['config']} | {r['strategy']} | {status_of(r)} | "
            f"{_fmt(ver.get('max_rel_err'))} | {_fmt(ver.get('nondeterministic_launches'))} | "
            f"{_fmt(comp.get('num_warps'))} | {_fmt(comp.get('warp_specialize_ops'))} / "
            f"{_fmt(comp.get('partition_regions'))} | {_fmt(comp.get('static_races'))} | "
            f"{notes.replace('|', '/')[:160]} |"
        )
    timed = [r for r in results if "ms" in (r.get("bench") or {})]
    if timed:
        lines += [
            "",
            "## Speed (median of interleaved rounds; ratio = rate / vendor rate, same run)",
            "",
            "| kernel | config | strategy | ms | spread | rate | unit | vendor | vendor rate |"
            " ratio | regs | smem KiB | WS partitions | modeled II |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in timed:
            b, comp = r["bench"], r.get("compile") or {}
            v = b.get("vendor") or {}
            smem = comp.get("shared_bytes")
            lines.append(
                f"| {r['kernel']} | {r['config']} | {r['strategy']} | {b['ms']:.3f} | "
                f"{_spread(b) if 'same_binary_as' not in b else '= ' + b['same_binary_as']} | "
                f"{b['rate']:.1f} | {b['unit']} | {v.get('label', '-')} | "
                f"{_fmt(v.get('rate'), '.1f')} | {_fmt(b.get('ratio_to_vendor'), '.3f')} | "
                f"{_fmt(comp.get('n_regs'))} | {_fmt(smem / 1024 if smem else None, '.0f')} | "
                f"{1 + comp['partition_regions'] if comp.get('warp_specialize_ops') else 1} | "
                f"{_fmt(modeled_ii(r))} |"
            )
        lines += [
            "",
            "## Modeled II vs measured time (Spearman, ws_solver strategies)",
            "",
            "Within each config, over distinct binaries (n), unnormalized; `-` below 3 binaries "
            "or when II or time is constant. With few distinct II values (ties) the statistic "
            "is bounded well below 1 and says little. The plan sweep (benchmarks/sweep_plans.py"
            ", fit_sweep.py) is the check of the model.",
            "",
        ]
        for kernel, c in corr.items():
            per_config = "; ".join(
                f"{config} {_fmt(v['spearman'], '.2f')} (n={v['points']}, {v['distinct_ii']} II)"
                for config, v in c["configs"].items()
            )
            lines.append(f"- {kernel}: {per_config}")
        lines += ["", "## Targets (best verified variant per kernel vs the vendor, same run)", ""]
        lines += _targets(results)
        lines += ["", "## ws_solver vs Triton (best verified strategy of each, same run)", ""]
        lines += _versus_triton(results)
        lines += against_stock.markdown_section(results, lambda r: status_of(r) == "ok")
        lines += _alternatives(results)
        lines += _sustained_table(results)
    return "\n".join(lines) + "\n"


def _sustain_header(sustain: dict | None) -> list[str]:
    if not sustain:
        return []
    where = f"configs containing `{sustain['configs']}`" if sustain["configs"] else "every config"
    return [
        f"- sustained timing ({where}): each variant and the vendor back to back for "
        f"{sustain['seconds']:g} s, {sustain['rounds']} interleaved rounds (`## Sustained`)"
    ]


def _sustained_table(results: list[dict]) -> list[str]:
    """The sustained timings (vendor first per config), where the run took them."""
    rows = [r for r in results if "sustained" in (r.get("bench") or {})]
    if not rows:
        return []
    lines = [
        "",
        "## Sustained (each variant back to back, interleaved rounds, GPU sampled)",
        "",
        "Rate: median over the rounds; SM clock, power and the share of samples with the "
        "power cap active: over all rounds; J: energy per launch. A kernel at the power "
        "cap is as fast as its energy per launch allows.",
        "",
        "| kernel | config | strategy | rate | × vendor | SM MHz | W | power-capped | J/launch |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    # Each vendor timing heads the rows measured against it (rows of one config can hold
    # different ones, e.g. from a results file merged from several runs).
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        vendor_row = r["bench"].get("vendor") or {}
        timing = (r["kernel"], r["config"], (vendor_row.get("sustained") or {}).get("rate"))
        groups.setdefault(timing, []).append(r)
    for (kernel, config, _), members in groups.items():
        vendor_row = members[0]["bench"].get("vendor") or {}
        if "sustained" in vendor_row:
            label = vendor_row.get("label", "vendor")
            lines.append(_sustained_line(kernel, config, label, vendor_row))
        lines += [_sustained_line(kernel, config, r["strategy"], r["bench"]) for r in members]
    return lines


def _sustained_line(kernel: str, config: str, label: str, row: dict) -> str:
    s = row["sustained"]
    samples = [x for x in s["rounds"] if x.get("samples")]

    def mean(key: str) -> float | None:
        return statistics.mean(x[key] for x in samples) if samples else None

    return (
        f"| {kernel} | {config} | {label} | {s['rate']:.1f} | "
        f"{_fmt(s.get('ratio_to_vendor', 1.0), '.3f')} | {_fmt(mean('sm_mhz'), '.0f')} | "
        f"{_fmt(mean('power_w'), '.0f')} | {_fmt(mean('power_capped'), '.0%')} | "
        f"{_fmt(mean('joules_per_launch'), '.3f')} |"
    )


TRITON_STRATEGIES = ("builtin", "triton")


def _spread(bench_row: dict) -> str:
    """(slowest - fastest) / median of the interleaved timing rounds, in percent."""
    rounds = bench_row.get("ms_rounds") or []
    if len(rounds) < 2:
        return "-"
    return f"{100 * (max(rounds) - min(rounds)) / bench_row['ms']:.1f}%"


def _fastest(rows: list[dict], strategies: Iterable[str]) -> dict | None:
    """The verified, timed row with the highest rate among `strategies` (rates, not times:
    a kernel's configs may do different work, e.g. causal attention)."""
    timed = [
        r
        for r in rows
        if r["strategy"] in strategies and status_of(r) == "ok" and "rate" in (r.get("bench") or {})
    ]
    return max(timed, key=lambda r: r["bench"]["rate"], default=None)


def _versus_triton(results: list[dict]) -> list[str]:
    """Per kernel config and per kernel (best config): rate of the fastest ws_solver strategy
    over the fastest Triton strategy (> 1: ws_solver faster)."""
    lines = [
        "| kernel | config | best ws_solver | rate | best Triton | rate | speedup |",
        "|---|---|---|---|---|---|---|",
    ]
    for kernel in sorted({r["kernel"] for r in results}):
        rows = [r for r in results if r["kernel"] == kernel]
        groups = [
            (c, [r for r in rows if r["config"] == c]) for c in sorted({r["config"] for r in rows})
        ]
        for config, chosen in [*groups, ("(best config)", rows)]:
            ours, theirs = _fastest(chosen, OURS), _fastest(chosen, TRITON_STRATEGIES)
            if ours is None or theirs is None:
                continue
            speedup = ours["bench"]["rate"] / theirs["bench"]["rate"]
            lines.append(
                f"| {kernel} | {config} | {_variant(ours, config)} | {ours['bench']['rate']:.1f} | "
                f"{_variant(theirs, config)} | {theirs['bench']['rate']:.1f} | {speedup:.3f} |"
            )
    return lines


def _variant(row: dict, config: str) -> str:
    return row["strategy"] + (f" ({row['config']})" if config.startswith("(") else "")


def _alternatives(results: list[dict]) -> list[str]:
    """The vendor's alternative implementations timed in the same run (e.g. SDPA backends)."""
    lines: list[str] = []
    seen = set()
    for r in results:
        v = (r.get("bench") or {}).get("vendor") or {}
        key = (r["kernel"], r["config"])
        if not v.get("alternatives") or key in seen:
            continue
        seen.add(key)
        if not lines:
            lines += ["", "## Vendor alternatives (same run)", ""]
            lines += [
                "| kernel | config | default | rate | alternative | rate |",
                "|---|---|---|---|---|---|",
            ]
        for label, alt in v["alternatives"].items():
            rate = _fmt(alt.get("rate"), ".1f") if "rate" in alt else alt.get("error", "-")
            lines.append(
                f"| {r['kernel']} | {r['config']} | {v.get('label')} | "
                f"{_fmt(v.get('rate'), '.1f')} | {label} | {rate} |"
            )
    return lines


def _targets(results: list[dict]) -> list[str]:
    out = []
    for kernel in sorted({r["kernel"] for r in results}):
        best: dict[str, dict] = {}
        for r in results:
            b = r.get("bench") or {}
            if r["kernel"] != kernel or "rate" not in b or b.get("failed"):
                continue
            if r["strategy"] not in best or b["rate"] > best[r["strategy"]]["bench"]["rate"]:
                best[r["strategy"]] = r
        if not best:
            continue
        target = TARGETS["gemm"] if kernel.startswith("gemm") else TARGETS.get(kernel)
        parts = []
        for s in STRATEGIES:
            if s in best:
                ratio = best[s]["bench"].get("ratio_to_vendor")
                parts.append(f"{s} {_fmt(ratio, '.3f')} ({best[s]['config']})")
        goal = f"target >= {target}x" if target else "no target"
        out.append(f"- {kernel} ({goal}): " + ", ".join(parts))
    return out


def print_table(results: list[dict]) -> None:
    print(f"\n{'variant':<58} {'status':<16} {'rel err':>9} {'rate':>8} {'ratio':>6} {'WS':>3}")
    for r in results:
        b = r.get("bench") or {}
        comp = r.get("compile") or {}
        print(
            f"{r['kernel'] + '.' + r['config'] + '.' + r['strategy']:<58} {status_of(r):<16} "
            f"{_fmt((r.get('verify') or {}).get('max_rel_err')):>9} "
            f"{_fmt(b.get('rate'), '.1f'):>8} {_fmt(b.get('ratio_to_vendor'), '.3f'):>6} "
            f"{_fmt(comp.get('warp_specialize_ops')):>3}"
        )


# -- main --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None, distributed: Any = None) -> int:
    """`distributed`: where compiles, verification and timing run instead of here (a
    `benchmarks.sweep_backend.Distributed`: Ray); None: here, as always."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default=",".join(corpus_kernels.KERNEL_MODULES))
    parser.add_argument(
        "--configs",
        default="",
        help="only configs whose name contains one of these (comma-separated substrings)",
    )
    parser.add_argument("--strategies", default=",".join(STRATEGIES + VERIFY_ONLY))
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
        "(e.g. benchmarks/ahead_configs.json); combine with --configs to run only them",
    )
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench_out")))
    parser.add_argument(
        "--what",
        default="",
        help="what this run is, for the manifest.json written to --out (the archive's format: "
        "benchmarks/results/README.md)",
    )
    parser.add_argument("--cache-root", type=Path, default=None)
    parser.add_argument("--parallel", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--capability", type=int, default=90)
    parser.add_argument("--compile-one", nargs=3, metavar=("KERNEL", "CONFIG", "STRATEGY"))
    parser.add_argument("--json-out", default=None)
    parser.add_argument("--build-launcher", action="store_true")
    parser.add_argument(
        "--skip", action="append", default=[], help="JOB=reason: do not launch this variant"
    )
    args = parser.parse_args(argv)
    add_extra_configs(args.extra_configs or os.environ.get(EXTRA_CONFIGS_ENV))
    if args.compile_one:
        return _compile_one_main(args)
    command = "python -m benchmarks.bench_kernels " + shlex.join(
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
    strategies = [s for s in args.strategies.split(",") if s]
    jobs = [j for j in all_jobs(kernels, strategies) if config_matches(j.config, args.configs)]
    cache_root = args.cache_root or Path(tempfile.mkdtemp(prefix="ws_bench_cache_"))
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if distributed is None:
        print(f"compiling {len(jobs)} variants ({args.parallel} at a time) into {cache_root}")
        infos = compile_many(jobs, cache_root, args.capability, args.parallel, not args.dry_run)
    else:
        print(f"compiling {len(jobs)} variants as {distributed.name} tasks into {cache_root}")
        infos = distributed.compile_all(jobs, cache_root, args)
    print(f"compiled in {time.perf_counter() - start:.0f} s", flush=True)
    results = [
        {
            "job": j.name,
            "kernel": j.kernel,
            "config": j.config,
            "strategy": j.strategy,
            "compile": infos.get(j.name, {"error": "no compile record"}),
            "dry_run": args.dry_run,
        }
        for j in jobs
    ]
    env = environment(args, gpu_here=distributed is None)
    save = _saver(args.out, env, results)
    save()
    if not args.dry_run:
        skip = {name: why for name, _, why in (x.partition("=") for x in args.skip) if name}
        for row in results:
            if row["job"] in skip:
                row["verify"] = {"passed": False, "why": f"not run: {skip[row['job']]}"}
    if not args.dry_run and distributed is not None:
        env["gpus"] = distributed.verify_and_time(results, skip, cache_root, args, save)
    elif not args.dry_run:
        _watchdog(save)
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
        verify_then_time(rows, cache_root, save, kernels, args.rounds, sustain)
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


_progress = [time.monotonic()]


def _saver(out: Path, env: dict, results: list[dict]):
    def save() -> None:
        _progress[0] = time.monotonic()
        corr = correlations(results)
        payload = {"environment": env, "results": results, "spearman": corr}
        (out / "results.json").write_text(json.dumps(payload, indent=1, default=str))
        (out / "results.md").write_text(markdown(env, results, corr))

    return save


def _watchdog(save) -> None:
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


def _verify_all(results: list[dict], cache_root: Path, save) -> dict:
    """Load each compiled variant and run the correctness checks; returns the kernels."""
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
            kernel, _ = compile_job(job, cache_root)  # served from the strategy's cache
            _build_launcher(kernel, cache_root)
            row["compile"]["n_regs"] = getattr(kernel, "n_regs", None)
            row["compile"]["n_spills"] = getattr(kernel, "n_spills", None)
        except Exception as e:
            row["verify"] = {"passed": False, "why": f"load failed: {_first_error_line(e)}"}
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
        print(
            f"verify {row['job']:<60} {status_of(row):<14} "
            f"{_fmt(row['verify'].get('max_rel_err'))} {row['verify'].get('why', '')[:80]}",
            flush=True,
        )
    return compiled


if __name__ == "__main__":
    sys.exit(main())

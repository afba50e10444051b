"""The kernel bench and plan sweep on a `ws_solver.backends` backend (Ray): every variant's
compile a CPU task (still in its own subprocess on the worker), then each config's
verification and timing a task that asks for one GPU, so the configs spread over every GPU
of the cluster while a config's variants and its vendor reference stay interleaved on one.

A GPU task compiles what its node's cache lacks (``--cache-root`` on a shared file system
makes the CPU tasks' compiles reach every GPU node; elsewhere it only costs time). A task that
keeps failing (a hung kernel ends its worker through the watchdog) leaves its rows marked not
verified with the reason; the other configs' results are kept and saved as they arrive."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import bench_compile
from benchmarks.gpu import bench_gpu


class Distributed:
    """What `bench_kernels.main(argv, distributed)` runs on a backend instead of here."""

    def __init__(self, backend: Any, retries: int = 2) -> None:
        self.backend, self.retries = backend, retries
        self.name = backend.name

    @property
    def stats(self) -> Any:
        return self.backend.stats

    def compile_all(self, jobs: list[bench_compile.Job], cache_root: Path, args: Any) -> dict:
        return compile_all(self.backend, jobs, cache_root, args, self.retries)

    def verify_and_time(
        self, results: list[dict], skip: dict, cache_root: Path, args: Any, save: Any
    ) -> list[str]:
        return verify_and_time(self.backend, results, skip, cache_root, args, save, self.retries)


@contextlib.contextmanager
def distributed(name: str, address: str | None, retries: int) -> Iterator[Distributed]:
    """The backend `name` with this repository's code shipped to its workers (BackendError
    when it cannot be used)."""
    import benchmarks
    import corpus
    import ws_solver
    from ws_solver.backends import BackendError, open_backend

    if address and name != "ray":
        raise BackendError("--ray-address needs --backend ray")
    with open_backend(name, None, address, (ws_solver, benchmarks, corpus)) as backend:
        yield Distributed(backend, retries)


@dataclass(frozen=True)
class CompileSpec:
    job: bench_compile.Job
    cache_root: str
    capability: int
    build_launcher: bool
    extra_configs: str | None


def compile_task(spec: CompileSpec) -> dict:
    """One variant's compile record (runs in a worker)."""
    bench_compile.add_extra_configs(spec.extra_configs)
    return bench_compile.compile_in_subprocess(
        spec.job, Path(spec.cache_root), spec.capability, spec.build_launcher
    )


def compile_all(
    backend: Any, jobs: list[bench_compile.Job], cache_root: Path, args: Any, retries: int = 2
) -> dict:
    """`bench_compile.compile_many` on the backend: {job name: compile record}."""
    extra = os.environ.get(bench_compile.EXTRA_CONFIGS_ENV)
    specs = [
        CompileSpec(job, str(cache_root), args.capability, not args.dry_run, extra)
        for job in bench_compile.compile_order(jobs)
    ]
    infos = {}
    results = backend.map(compile_task, specs, retries=retries)
    for spec, result in zip(specs, results, strict=True):
        if result.ok:
            infos[spec.job.name] = result.value
        else:
            why = f"compile task failed after {result.attempts} attempt(s): {result.error}"
            infos[spec.job.name] = {"job": spec.job.name, "error": why}
    return infos


@dataclass(frozen=True)
class ConfigSpec:
    """One config's rows to verify (and time, when `bench`) on one GPU."""

    kernel: str
    config: str
    rows: list
    cache_root: str
    bench: bool
    rounds: int
    sustain: Any  # bench_gpu.Sustain | None
    extra_configs: str | None


_watching = threading.Lock()


def config_task(spec: ConfigSpec) -> dict:
    """Verify and time one config's variants on this worker's GPU (Ray sets
    CUDA_VISIBLE_DEVICES, so it is device 0 here); the rows, filled in, and where they ran."""
    import torch

    bench_compile.add_extra_configs(spec.extra_configs)
    if _watching.acquire(blocking=False):  # one watchdog per worker process, kept
        bench_gpu.watchdog(lambda: None)  # a hung kernel ends this worker: the task fails, retried
    rows, cache_root = spec.rows, Path(spec.cache_root)
    kernels = [spec.kernel] if spec.bench else []
    bench_gpu.verify_then_time(rows, cache_root, lambda: None, kernels, spec.rounds, spec.sustain)
    return {
        "rows": rows,
        "gpu": torch.cuda.get_device_name(0),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


def verify_and_time(
    backend: Any,
    results: list[dict],
    skip: dict,
    cache_root: Path,
    args: Any,
    save: Any,
    retries: int = 2,
) -> list[str]:
    """Every config's rows as one GPU task; rows updated in place and saved as each config
    ends. Returns the GPUs that ran them ("host: name")."""
    bench = {k for k in (args.bench_kernels or args.kernels).split(",") if k in bench_gpu.BENCH}
    sustain = (
        bench_gpu.Sustain(args.sustain, args.sustain_rounds, args.sustain_configs)
        if args.sustain > 0
        else None
    )
    extra = os.environ.get(bench_compile.EXTRA_CONFIGS_ENV)
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in results:
        if row["job"] not in skip:
            groups.setdefault((row["kernel"], row["config"]), []).append(row)
    specs = [
        ConfigSpec(
            kernel,
            config,
            rows,
            str(cache_root),
            kernel in bench and not args.no_bench,
            args.rounds,
            sustain,
            extra,
        )
        for (kernel, config), rows in groups.items()
    ]
    gpus: set[str] = set()
    start = time.perf_counter()

    def merge(result: Any) -> None:
        spec = specs[result.index]
        if result.ok:
            done = {row["job"]: row for row in result.value["rows"]}
            for row in spec.rows:
                row.update(done[row["job"]])
            gpus.add(f"{result.value['worker'].rsplit(':', 1)[0]}: {result.value['gpu']}")
        else:
            why = f"GPU task failed after {result.attempts} attempt(s): {result.error}"
            for row in spec.rows:
                row["verify"] = {"passed": False, "why": why}
        save()
        print(
            f"[{time.perf_counter() - start:.0f} s] {spec.kernel}.{spec.config}: "
            f"{'done' if result.ok else why}",
            flush=True,
        )

    backend.map(config_task, specs, progress=merge, retries=retries, gpus=1)
    return sorted(gpus)

"""The autotune column's compile side: every candidate build of one kernel call (the
autotuner's reference and candidates), compiled into the drop-in's per-strategy Triton caches
before the call is tuned, so that the tuning process loads them instead of compiling. One
helper process per call, many at once (``warm_in_subprocess``).

A *spec* is what Triton's JIT compiles for that call: the signature, constexprs and
attributes it specializes on and its parsed options (Triton's ``specialization_data``, the
JSON ``knobs.runtime.jit_cache_hook`` is handed and ``JITFunction.preload`` reads), plus the
target. A build compiled from it under the candidate's drop-in settings
(``ws_solver.triton.autotuning.launcher.build_scope``) has the Triton cache key and folder
the JIT's build of that call has, so the tuning finds it. On the GPU machine the spec comes
from the launch itself (``benchmarks.gpu.bench_autotune``); without a GPU (``--dry-run``) from
the corpus source (``corpus.dump.ast_source``): the same compile work, but not the JIT's key
(the corpus spells a descriptor type without the space the JIT's specialization puts in it).

    python -m benchmarks.common.autotune_warm SPEC.json --cache-dir DIR --json-out OUT.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.bench_compile import REPO_ROOT, binary_digest, first_error_line
from corpus import kernels as corpus_kernels

WARM_TIMEOUT_S = 600  # one call's builds (about ten; the slowest corpus config takes ~40 s)
NICE = 5  # helpers yield the CPU to the process that tunes on the GPU meanwhile


# -- specs --------------------------------------------------------------------------------------
def spec_from_jit(kernel: str, config: str, specialization_data: str, target: Any) -> dict:
    """The spec of a call from what the JIT hands its ``jit_cache_hook`` (and the target)."""
    spec = json.loads(specialization_data)
    target = {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size}
    return {**spec, "kernel": kernel, "config": config, "target": target, "from": "jit"}


def spec_from_corpus(kernel: str, config: str, capability: int) -> dict:
    """The spec corpus/dump.py compiles for a config (no GPU, no launch): the compile work of
    the call, not its JIT cache key (module docstring)."""
    from corpus.dump import ast_source

    cfg = corpus_kernels.load(kernel).CONFIGS[config]
    src = ast_source(kernel, cfg)
    return {
        "name": src.name,
        "signature": src.signature,
        "constant_keys": [list(k) for k in src.constants],
        "constant_vals": [_encode_constant(v) for v in src.constants.values()],
        "attrs_keys": [list(k) for k in src.attrs],
        "attrs_vals": list(src.attrs.values()),
        "options": corpus_kernels.options(cfg),
        "kernel": kernel,
        "config": config,
        "target": {"backend": "cuda", "arch": capability, "warp_size": 32},
        "from": "corpus",
    }


def _encode_constant(value: Any) -> Any:
    """A constexpr value as Triton's ``serialize_specialization_data`` writes it."""
    kind = value.__class__.__name__
    if kind == "dtype":
        return str(value)
    if kind == "constexpr":
        return {"constexpr": value.value}
    return value


def _tuple(value: Any) -> Any:
    """JSON lists back to the tuples they were (no kernel argument is a list)."""
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def _decode_constant(value: Any) -> Any:
    import triton.language as tl

    if isinstance(value, str) and tl.dtype.is_dtype(value):
        return tl.dtype(value)
    if isinstance(value, dict):
        if "constexpr" in value:
            return tl.constexpr(_tuple(value["constexpr"]))
        raise ValueError(f"a constexpr this warm pass cannot rebuild: {value!r}")
    return _tuple(value)


def source_of(spec: dict) -> tuple[Any, dict]:
    """(the ASTSource the JIT compiles for the spec's call, its options), as
    ``JITFunction.preload`` rebuilds them, without a driver."""
    from triton.compiler import ASTSource

    jit = corpus_kernels.load(spec["kernel"]).KERNEL
    constants = {
        tuple(k): _decode_constant(v)
        for k, v in zip(spec["constant_keys"], spec["constant_vals"], strict=True)
    }
    attrs = {tuple(k): v for k, v in zip(spec["attrs_keys"], spec["attrs_vals"], strict=True)}
    signature = {k: _tuple(v) for k, v in spec["signature"].items()}
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["options"].items()}
    return ASTSource(jit, signature, constants, attrs), options


# -- building -----------------------------------------------------------------------------------
def builds(candidates: Sequence[str] | str) -> list[Any]:
    """What the autotuner builds for one call: its reference, then each candidate once."""
    from ws_solver.core.candidates import REFERENCE, expand

    return [REFERENCE, *(c for c in expand(candidates) if c != REFERENCE)]


def warm(spec: dict, candidates: Sequence[str] | str, enable_options: dict) -> dict:
    """Compile every build of the spec's call into its Triton cache: per build its compile
    seconds, Triton cache hash, cubin digest and what the drop-in compiled, or the error."""
    import triton
    from triton.backends.compiler import GPUTarget

    from ws_solver.triton.autotuning.launcher import build_scope

    start = time.perf_counter()
    src, options = source_of(spec)
    target = GPUTarget(**spec["target"])
    done = []
    for candidate in builds(candidates):
        opts = dict(options)
        if candidate.stage_delta:
            opts["num_stages"] = candidate.num_stages(opts["num_stages"])
        entry: dict = {"name": candidate.name}
        t0 = time.perf_counter()
        try:
            with build_scope(candidate, enable_options):
                compiled = triton.compile(src, target=target, options=opts)
            report = getattr(compiled.metadata, "ws_solver", None)
            entry["hash"] = compiled.hash
            entry["binary"] = binary_digest(compiled)
            entry["strategy_used"] = report.get("strategy_used") if report else None
        except Exception as e:  # the tuning discards it the same way
            entry["error"] = first_error_line(e)
        entry["compile_s"] = round(time.perf_counter() - t0, 2)
        done.append(entry)
    return {
        "kernel": spec["kernel"],
        "config": spec["config"],
        "from": spec["from"],
        "builds": done,
        "compile_s": round(time.perf_counter() - start, 2),
    }


def warm_in_subprocess(
    spec: dict, cache_dir: Path, candidates: Sequence[str] | str, nice: int = NICE
) -> dict:
    """``warm`` in a helper process (a crash takes only it down), its record with the
    helper's wall seconds (``wall_s``: with Python's start and the imports)."""
    from ws_solver.core.processes import die_with_parent

    names = candidates if isinstance(candidates, str) else ",".join(candidates)
    name = f"{spec['kernel']}.{spec['config']}"
    die = die_with_parent()

    def preexec() -> None:
        die()
        os.nice(nice)

    with tempfile.TemporaryDirectory(prefix="ws_autotune_warm_") as workdir:
        spec_path, out = Path(workdir) / "spec.json", Path(workdir) / "warm.json"
        spec_path.write_text(json.dumps(spec))
        cmd = [sys.executable, "-m", "benchmarks.common.autotune_warm", str(spec_path)]
        cmd += ["--cache-dir", str(cache_dir), "--candidates", names, "--json-out", str(out)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=WARM_TIMEOUT_S,
                cwd=REPO_ROOT,
                preexec_fn=preexec,
            )
        except subprocess.TimeoutExpired:
            return {"job": name, "error": f"warm pass timed out after {WARM_TIMEOUT_S} s"}
        wall = round(time.perf_counter() - start, 2)
        if out.exists():
            return {**json.loads(out.read_text()), "wall_s": wall}
        tail = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()][-3:]
        why = f"warm process died (rc {proc.returncode}): {' | '.join(tail)[:400]}"
        return {"job": name, "error": why, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    """The helper of ``warm_in_subprocess``: compile one spec's builds, write the record."""
    from ws_solver.core.candidates import DEFAULT_CANDIDATES

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("spec", type=Path, help="the call's spec (JSON, see the module)")
    parser.add_argument("--cache-dir", required=True, help="the builds' Triton cache base")
    parser.add_argument("--candidates", default=",".join(DEFAULT_CANDIDATES))
    parser.add_argument("--json-out", required=True, type=Path, help="where the record goes")
    args = parser.parse_args(argv)
    spec = json.loads(args.spec.read_text())
    record = warm(spec, args.candidates, {"cache_dir": args.cache_dir})
    args.json_out.write_text(json.dumps(record, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

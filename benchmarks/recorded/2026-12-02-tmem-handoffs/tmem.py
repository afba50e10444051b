"""TMEM columns Triton allocates (make_llir's tmem_size) against the model's, sm_100, per
strategy, and the llvm.trap calls left in the LLVM IR. Compile only (no GPU).

    TRITON_CACHE_DIR=$(mktemp -d) PYTHONPATH=. \\
        python benchmarks/recorded/2026-12-02-tmem-handoffs/tmem.py builtin,heuristic,optimal,none

run from the repository root with the Triton to test installed; the guard is off
(lowering_timeout=None) so that every plan is lowered as planned."""

from __future__ import annotations

import sys
import tempfile
import warnings

import triton
from triton.backends.compiler import GPUTarget

from corpus import kernels as ck
from corpus.dump import ast_source
from ws_solver.triton.dropin import switch as dropin

JOBS = [
    ("attention_bwd", "d128_n128m64_w8_s2"),
    ("attention_bwd", "d64_n128m64_w4_s2"),
    ("attention_fwd", "d128_m128n128_w8_s2"),
    ("attention_fwd", "d128_m128n128_w8_s3_ahead"),
    ("attention_fwd", "causal_d128_m128n128_w8_s2"),
    ("attention_fwd", "d64_m128n64_w4_s3"),
    ("gemm_persistent", "t128x256x64_relu_w8_s3"),
    ("gemm_persistent", "t128x128x64_gelu_w4_s3"),
    ("gemm_tma", "t128x256x64_w8_s3"),
    ("gemm_grouped", "t128x128x64_w4_s3"),
]
TARGET = GPUTarget("cuda", 100, 32)


def compile_one(kernel: str, cfg: str, strategy: str) -> str:
    config = ck.load(kernel).CONFIGS[cfg]
    src, options = ast_source(kernel, config), ck.options(config)
    if strategy == "builtin":
        compiled, model = triton.compile(src, target=TARGET, options=options), "-"
    else:
        with (
            tempfile.TemporaryDirectory() as cache,
            dropin.partitioner(strategy, cache_dir=cache, lowering_timeout=None),
        ):
            compiled = triton.compile(src, target=TARGET, options=options)
        report = compiled.metadata._asdict().get("ws_solver") or {}
        model = [
            (loop.get("specialized"), (loop.get("cost") or {}).get("tensor_memory_columns"))
            for loop in report.get("loops", [])
        ]
    tmem = compiled.metadata._asdict().get("tmem_size")
    traps = compiled.asm["llir"].count("call void @llvm.trap")
    return f"tmem_size {tmem} model {model} traps {traps}"


def main() -> None:
    warnings.simplefilter("ignore")
    for kernel, cfg in JOBS:
        for strategy in sys.argv[1].split(","):
            try:
                line = compile_one(kernel, cfg, strategy)
            except Exception as e:  # a refusal or a failure is a row too
                line = "ERROR " + str(e).splitlines()[0][:100]
            print(triton.__version__, kernel, cfg, strategy, line, flush=True)


if __name__ == "__main__":
    main()

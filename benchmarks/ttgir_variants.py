"""Time hand-edited TTGIR of one corpus config against its vendor reference, on the GPU.

    python3 benchmarks/ttgir_variants.py KERNEL CONFIG VARIANT... [--rounds 5] [--out DIR]

A VARIANT is a ``.ttgir`` file (the final TTGIR of that kernel and config, e.g. the
``asm["ttgir"]`` of a compile, edited by hand) or ``dropin:STRATEGY`` (a normal compile
through ws_solver's drop-in). A file replaces the ttgir stage: the drop-in's ``none``
pipeline still runs first, for the metadata the launcher needs (TMA descriptor layouts),
then Triton lowers the file's module instead. Each variant is checked against the fp32
reference and for bitwise-equal repeated launches, then all are timed in interleaved rounds
with the vendor reference; the medians go to ``DIR/ttgir_variants.json``. This is for
trying an IR-level idea on the GPU before writing the rewrite that would produce it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_kernels as bench  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402
from corpus.dump import ast_source  # noqa: E402


def _compile(kernel: str, config: dict, variant: str) -> Any:
    import triton
    from triton import knobs
    from triton._C.libtriton import ir as triton_ir
    from triton.backends.compiler import GPUTarget

    import ws_solver.triton as wst

    knobs.cache.dir = tempfile.mkdtemp(prefix="ttgir_variant_")
    source = ast_source(kernel, config)
    target = GPUTarget("cuda", 90, 32)
    strategy = variant.removeprefix("dropin:") if variant.startswith("dropin:") else "none"
    wst.enable(strategy, cache=False)
    dropin_hook = knobs.runtime.add_stages_inspection_hook

    def from_file(backend: Any, stages: dict, options: Any, language: Any, capability: int):
        dropin_hook(backend, stages, options, language, capability)
        original = stages["ttgir"]

        def ttgir(module: Any, metadata: dict) -> Any:
            original(module, metadata)  # fills metadata; its module is dropped
            edited = triton_ir.parse_mlir_module(variant, module.context)
            edited.context = module.context
            return edited

        stages["ttgir"] = ttgir

    if not variant.startswith("dropin:"):
        knobs.runtime.add_stages_inspection_hook = from_file
    try:
        return triton.compile(source, target=target, options=corpus_kernels.options(config))
    finally:
        knobs.runtime.add_stages_inspection_hook = dropin_hook
        wst.disable()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("config")
    parser.add_argument("variants", nargs="+", help="TTGIR files or dropin:STRATEGY")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    args = parser.parse_args(argv)
    if args.kernel not in corpus_kernels.KERNEL_MODULES:
        parser.error(f"unknown kernel {args.kernel!r}")
    missing = [v for v in args.variants if not v.startswith("dropin:") and not Path(v).is_file()]
    if missing:
        parser.error(f"no such TTGIR file: {missing[0]}")

    module = corpus_kernels.load(args.kernel)
    if args.config not in module.CONFIGS:
        parser.error(f"{args.kernel} has no config {args.config!r}")
    config = module.CONFIGS[args.config]

    import torch
    from triton.testing import do_bench

    spec = bench.BENCH[args.kernel]
    extra = {k: v for k, v in spec.items() if k != "size"}
    inputs = module.make_inputs(config, spec["size"], 1234, **extra)
    work, unit = bench.kernel_work(args.kernel, config, inputs)
    reference = module.reference(inputs)
    vendor = bench.vendor(args.kernel, config, inputs)
    if vendor is None:
        parser.error(f"{args.kernel}: no vendor reference to time against")
    runs = {"vendor": vendor["fn"]}
    checks: dict[str, dict] = {}
    for variant in args.variants:
        compiled = _compile(args.kernel, config, variant)

        def run(compiled: Any = compiled) -> Any:
            with bench.bound(module, compiled):
                return module.launch(config, inputs)

        out = run().float()
        repeats = [run().clone() for _ in range(3)]
        checks[variant] = {
            "rel_err": ((out - reference).norm() / reference.norm()).item(),
            "bitwise_repeatable": all(torch.equal(repeats[0], r) for r in repeats[1:]),
            "n_regs": compiled.n_regs,
            "n_spills": compiled.n_spills,
        }
        runs[variant] = run
        print(variant, checks[variant], flush=True)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, fn in runs.items():
            times[name].append(do_bench(fn, warmup=25, rep=100, return_mode="median"))
    vendor_rate = work / statistics.median(times["vendor"]) / 1e9
    results = {}
    for name, ms in times.items():
        rate = work / statistics.median(ms) / 1e9
        results[name] = {"ms": ms, "rate": rate, "unit": unit, "ratio": rate / vendor_rate}
        results[name].update(checks.get(name, {}))
        print(f"{name:40s} {rate:7.1f} {unit}  {rate / vendor_rate:.3f} x vendor", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / "ttgir_variants.json"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"kernel": args.kernel, "config": args.config, **results}, indent=1))
    tmp.replace(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time hand-edited TTGIR or PTX of one corpus config against its vendor reference, on the GPU.

    python3 -m benchmarks.gpu.ttgir_variants KERNEL CONFIG VARIANT... [--rounds 5] [--out DIR]
        [--extra-configs FILE] [--base-strategy STRATEGY]

A VARIANT is one of

* a ``.ttgir`` file: the final TTGIR of that kernel and config (the ``asm["ttgir"]`` of a
  compile), edited by hand;
* a ``.ptx`` file: its PTX, edited, for what TTGIR cannot say (a barrier, say);
* ``dropin:STRATEGY``: a normal compile through ws_solver's drop-in;
* ``OTHER=`` followed by one of these: compiled and launched with config OTHER instead (a
  corpus config or one from ``--extra-configs``, in bench_kernels.py's format). OTHER must
  take the same inputs as CONFIG: all variants run on the same data.

A file replaces its stage: the drop-in's pipeline (``none``, or ``--base-strategy`` for a
file taken from a specialized compile) still runs first, for the metadata the launcher needs
(TMA descriptor layouts, warps), then Triton goes on from the file's text instead. Each
variant is checked against the fp32 reference and for bitwise-equal repeated launches, then
all are timed in interleaved rounds with the vendor reference; the medians go to
``DIR/ttgir_variants.json``. This is for trying an IR-level idea on the GPU before writing
the rewrite that would produce it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import bench_compile
from benchmarks.gpu import bench_gpu, bench_vendor
from corpus import kernels as corpus_kernels
from corpus.dump import ast_source
from ws_solver.triton.toolchain.versions import stages_hook

ROOT = Path(__file__).resolve().parents[2]


def _compile(kernel: str, config: dict, variant: str, base: str = "none") -> Any:
    import triton
    from triton import knobs
    from triton._C.libtriton import ir as triton_ir
    from triton.backends.compiler import GPUTarget

    import ws_solver.triton as wst

    knobs.cache.dir = tempfile.mkdtemp(prefix="ttgir_variant_")
    source = ast_source(kernel, config)
    target = GPUTarget("cuda", 90, 32)
    strategy = variant.removeprefix("dropin:") if variant.startswith("dropin:") else base
    wst.enable(strategy, cache=False)
    dropin_hook = knobs.runtime.add_stages_inspection_hook

    def from_file(backend: Any, stages: dict, options: Any, language: Any, capability: int):
        dropin_hook(backend, stages, options, language, capability)
        original_ttgir, original_ptx = stages["ttgir"], stages["ptx"]

        def ttgir(module: Any, metadata: dict) -> Any:
            original_ttgir(module, metadata)  # fills metadata; its module is dropped
            edited = triton_ir.parse_mlir_module(variant, module.context)
            edited.context = module.context
            return edited

        def ptx(llvm_ir: str, metadata: dict) -> str:
            original_ptx(llvm_ir, metadata)  # fills metadata; its text is dropped
            return Path(variant).read_text()

        if variant.endswith(".ptx"):
            stages["ptx"] = ptx
        else:
            stages["ttgir"] = ttgir

    if not variant.startswith("dropin:"):
        knobs.runtime.add_stages_inspection_hook = stages_hook(from_file, f"variant-{variant}")
    try:
        return triton.compile(source, target=target, options=corpus_kernels.options(config))
    finally:
        knobs.runtime.add_stages_inspection_hook = dropin_hook
        wst.disable()


def _split_variant(variant: str, default_config: str) -> tuple[str, str]:
    """'OTHER=VARIANT' -> (OTHER, VARIANT); a plain VARIANT runs with the default config."""
    config, sep, rest = variant.partition("=")
    if sep and re.fullmatch(r"[\w.]+", config):
        return config, rest
    return default_config, variant


def _sustained(runs: dict, seconds: float, rounds: int, work: float) -> dict[str, list[dict]]:
    """Each run back to back for `seconds`, in interleaved rounds, with the GPU sampled."""
    import torch

    from benchmarks.gpu import gpu_power

    def report(name: str, row: dict) -> None:
        print(f"sustained {name:40s} " + gpu_power.describe(row), flush=True)

    return gpu_power.interleaved(runs, seconds, rounds, work, torch.cuda.synchronize, report=report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("config")
    parser.add_argument("variants", nargs="+", help=".ttgir or .ptx files, or dropin:STRATEGY")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--sustain",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="also run each variant back to back for SECONDS (in --sustain-rounds interleaved "
        "rounds) with the SM clock, power and throttle state sampled (benchmarks/gpu/gpu_power.py)",
    )
    parser.add_argument("--sustain-rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    parser.add_argument("--extra-configs", help="JSON {kernel: {name: config}} to add")
    parser.add_argument(
        "--base-strategy",
        default="none",
        help="drop-in strategy whose compile a file variant replaces a stage of (default none)",
    )
    args = parser.parse_args(argv)
    if args.kernel not in corpus_kernels.KERNEL_MODULES:
        parser.error(f"unknown kernel {args.kernel!r}")
    variants = [_split_variant(v, args.config) for v in args.variants]
    files = [v for _, v in variants if not v.startswith("dropin:")]
    for path in files:
        if Path(path).suffix not in (".ttgir", ".ptx"):
            parser.error(f"{path}: a variant is a .ttgir or .ptx file, or dropin:STRATEGY")
        if not Path(path).is_file():
            parser.error(f"no such variant file: {path}")
    if args.extra_configs and not Path(args.extra_configs).is_file():
        parser.error(f"no such file: {args.extra_configs}")

    bench_compile.add_extra_configs(args.extra_configs)
    module = corpus_kernels.load(args.kernel)
    for name in dict.fromkeys([args.config, *(c for c, _ in variants)]):
        if name not in module.CONFIGS:
            parser.error(f"{args.kernel} has no config {name!r}")
    config = module.CONFIGS[args.config]

    import torch
    from triton.testing import do_bench

    spec = bench_gpu.BENCH[args.kernel]
    extra = {k: v for k, v in spec.items() if k != "size"}
    inputs = module.make_inputs(config, spec["size"], 1234, **extra)
    work, unit = bench_vendor.kernel_work(args.kernel, config, inputs)
    reference = module.reference(inputs)
    vendor = bench_vendor.vendor(args.kernel, config, inputs)
    if vendor is None:
        parser.error(f"{args.kernel}: no vendor reference to time against")
    runs = {"vendor": vendor["fn"]}
    checks: dict[str, dict] = {}
    for label, (config_name, variant) in zip(args.variants, variants, strict=True):
        variant_config = module.CONFIGS[config_name]
        compiled = _compile(args.kernel, variant_config, variant, args.base_strategy)

        def run(compiled: Any = compiled, variant_config: dict = variant_config) -> Any:
            with bench_gpu.bound(module, compiled):
                return module.launch(variant_config, inputs)

        out = run().float()
        repeats = [run().clone() for _ in range(3)]
        checks[label] = {
            "rel_err": ((out - reference).norm() / reference.norm()).item(),
            "bitwise_repeatable": all(torch.equal(repeats[0], r) for r in repeats[1:]),
            "n_regs": compiled.n_regs,
            "n_spills": compiled.n_spills,
        }
        runs[label] = run
        print(label, checks[label], flush=True)
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
    if args.sustain > 0:
        for name, rounds in _sustained(runs, args.sustain, args.sustain_rounds, work).items():
            results[name]["sustained"] = rounds
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / "ttgir_variants.json"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"kernel": args.kernel, "config": args.config, **results}, indent=1))
    tmp.replace(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

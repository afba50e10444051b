"""Launch one corpus variant (or its vendor reference) a few times at the bench size, for a
profiler to watch: ``ncu ... python3 -m benchmarks.gpu.profile_kernel KERNEL CONFIG STRATEGY``.

STRATEGY is a bench strategy (``none``, ``builtin``, ``heuristic``, ...) or ``vendor``.
Nothing is timed or checked here; ``bench_kernels.py`` does that. See ``profile_gpu.sh``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.common import bench_compile
from benchmarks.gpu import bench_gpu, bench_vendor
from corpus import kernels as corpus_kernels

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("config")
    parser.add_argument("strategy", help="a bench strategy, or 'vendor'")
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--cache-root", type=Path, default=Path("/tmp/ws_profile_cache"))
    args = parser.parse_args(argv)

    import torch

    module = corpus_kernels.load(args.kernel)
    config = module.CONFIGS[args.config]
    spec = bench_gpu.BENCH[args.kernel]
    inputs = module.make_inputs(
        config, spec["size"], 1234, **{k: v for k, v in spec.items() if k != "size"}
    )
    if args.strategy == "vendor":
        ref = bench_vendor.vendor(args.kernel, config, inputs)
        if ref is None:
            raise SystemExit(f"{args.kernel}: no vendor reference")
        run = ref["fn"]
    else:
        job = bench_compile.Job(args.kernel, args.config, args.strategy)
        compiled, info = bench_compile.compile_job(job, args.cache_root)
        if compiled is None:
            raise SystemExit(f"{job.name}: {info.get('error', 'did not compile')}")
        print(f"{job.name}: {info.get('num_warps')} warps, binary {info.get('binary')}")

        def run():
            with bench_gpu.bound(module, compiled):
                return module.launch(config, inputs)

    for _ in range(args.launches):
        run()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A program that knows nothing of ws_solver: it compiles a corpus kernel for a GPU target on
the CPU, in this process or in a worker process, and prints what it saw as one JSON line.

    python tests/autoload_child.py KERNEL CAPABILITY {here,worker,none}

Run by tests/test_autoload.py with and without $WS_SOLVER; "none" compiles nothing and only
imports Triton. It never imports ws_solver: whatever of ws_solver is loaded came from the
environment (ws_solver_autoload.pth).
"""

from __future__ import annotations

import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor


def compile_kernel(kernel: str, capability: int) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from corpus import kernels

    module = kernels.load(kernel)
    config = next(iter(module.CONFIGS.values()))
    signature = module.signature(config)
    divisible = set(getattr(module, "DIVISIBLE_ARGS", ()))
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, (name, ty) in enumerate(signature.items())
        if ty.startswith("*") or name in divisible
    }
    src = ASTSource(module.KERNEL, signature, constexprs=kernels.constexprs(config), attrs=attrs)
    compiled = triton.compile(
        src, target=GPUTarget("cuda", capability, 32), options=kernels.options(config)
    )
    return {"process": observed(), "specialized": "ttg.warp_specialize" in compiled.asm["ttgir"]}


def observed() -> dict:
    import os

    return {
        "pid": os.getpid(),
        "ws_solver_modules": sorted(m for m in sys.modules if m.split(".")[0] == "ws_solver"),
    }


def main(argv: list[str]) -> None:
    kernel, capability, where = argv[0], int(argv[1]), argv[2]
    if where == "none":
        import triton  # noqa: F401

        result = {"process": observed()}
    elif where == "here":
        result = compile_kernel(kernel, capability)
    else:  # a spawned worker, as Inductor's compile workers are fresh interpreters
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            result = pool.submit(compile_kernel, kernel, capability).result()
        result["parent"] = observed()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])

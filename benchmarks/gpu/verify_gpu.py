"""Correctness checks of compiled kernels on the GPU (a library of bench_kernels).

For each compiled variant: fresh random inputs for 3 seeds, outputs pre-filled with NaN,
relative error ‖out − ref‖ / ‖ref‖ against the corpus fp32 reference, then 10 launches on
the same inputs compared bitwise (a race shows up as results that change between identical
launches). A wrong or racy variant is FAILED; ws_solver's own strategies failing makes the
exit status non-zero, Triton's own are reported as they are.

Run through bench_kernels, which compiles the variants:

    python -m benchmarks.gpu.bench_kernels --no-bench [--kernels a,b] [--strategies s,t] [--out DIR]
    python -m benchmarks.gpu.bench_kernels --dry-run   # compile every variant for sm_90, no GPU
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

SEEDS = (0, 1, 2)
REPEATS = 10
TOLERANCE = 1e-2  # fp16/bf16/fp8 inputs with fp32 accumulation land near 1e-4..3e-3
# Tensors each launch writes: poisoned with NaN before every launch.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "attention_fwd": ("o", "lse"),
    "attention_fwd_indesc": ("o", "lse"),  # config-space forms of attention_fwd
    "attention_fwd_pointer": ("o", "lse"),
    "attention_bwd": ("dk", "dv"),
    "row_reduce": ("rstd",),
}
DEFAULT_OUTPUTS = ("c",)
# Problem sizes for the correctness runs (the `size` argument of make_inputs).
VERIFY_SIZE: dict[str, int] = {
    "attention_fwd": 1024,
    "attention_fwd_indesc": 1024,
    "attention_fwd_pointer": 1024,
    "attention_bwd": 512,
    "row_reduce": 4096,
    "gemm_grouped": 2048,
}
DEFAULT_VERIFY_SIZE = 2048


def outputs_of(kernel: str) -> tuple[str, ...]:
    return OUTPUTS.get(kernel, DEFAULT_OUTPUTS)


def as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def poison(inputs: dict[str, Any], names: tuple[str, ...]) -> None:
    """Fill the output tensors with NaN (never zeros: they hide unwritten elements)."""
    for name in names:
        t = inputs[name]
        if t.dtype.is_floating_point and t.element_size() >= 2:
            t.fill_(float("nan"))
        else:  # fp8 outputs: 0x7f is NaN in e4m3fn
            t.view(dtype=_uint8()).fill_(0x7F)


def _uint8():
    import torch

    return torch.uint8


def relative_error(out: Any, ref: Any) -> float:
    """‖out − ref‖ / ‖ref‖ in float64; inf when out has a NaN or inf."""
    import torch

    o, r = out.double(), ref.double()
    if not torch.isfinite(o).all():
        return math.inf
    denom = torch.linalg.vector_norm(r).item()
    return torch.linalg.vector_norm(o - r).item() / (denom if denom > 0 else 1.0)


def same_bits(a: Any, b: Any) -> bool:
    return bool((a.contiguous().view(_uint8()) == b.contiguous().view(_uint8())).all().item())


def check_variant(
    module: Any,
    kernel: str,
    config: dict,
    size: int | None = None,
    seeds: tuple[int, ...] = SEEDS,
    repeats: int = REPEATS,
    tolerance: float = TOLERANCE,
) -> dict:
    """Run one compiled variant (already bound as `module.KERNEL`) through the checks."""
    import torch

    size = size or VERIFY_SIZE.get(kernel, DEFAULT_VERIFY_SIZE)
    names = outputs_of(kernel)
    result: dict = {"size": size, "seeds": list(seeds), "errors": [], "unwritten": []}
    try:
        for seed in seeds:
            inputs = module.make_inputs(config, size, seed)
            poison(inputs, names)
            out = as_tuple(module.launch(config, inputs))
            torch.cuda.synchronize()
            refs = as_tuple(module.reference(inputs))
            errs = [relative_error(o, r) for o, r in zip(out, refs, strict=True)]
            result["errors"].append(max(errs))
            for name in names:
                t = inputs[name]
                if t.dtype.is_floating_point and t.element_size() >= 2:
                    bad = int((~torch.isfinite(t)).sum().item())
                    if bad:
                        result["unwritten"].append(f"seed {seed}: {name} has {bad} NaN/inf")
            del inputs, out, refs
        inputs = module.make_inputs(config, size, seeds[0])
        first = None
        differing = 0
        for _ in range(repeats):
            poison(inputs, names)
            module.launch(config, inputs)
            torch.cuda.synchronize()
            now = [inputs[n].clone() for n in names]
            if first is None:
                first = now
            elif not all(same_bits(a, b) for a, b in zip(first, now, strict=True)):
                differing += 1
        result["repeats"] = repeats
        result["nondeterministic_launches"] = differing
    except Exception as e:  # a launch error is a failed variant, not a crashed run
        result["exception"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
        try:
            torch.cuda.synchronize()
        except Exception as sync_error:
            result["exception"] += f"; then {type(sync_error).__name__}"
    result["max_rel_err"] = max(result["errors"]) if result["errors"] else None
    result["passed"] = (
        "exception" not in result
        and bool(result["errors"])
        and result["max_rel_err"] <= tolerance
        and not result["unwritten"]
        and result.get("nondeterministic_launches", 1) == 0
    )
    result["why"] = _why(result, tolerance)
    return result


def _why(result: dict, tolerance: float) -> str:
    if result["passed"]:
        return ""
    if "exception" in result:
        return result["exception"]
    reasons = []
    if result["max_rel_err"] is not None and result["max_rel_err"] > tolerance:
        reasons.append(f"rel err {result['max_rel_err']:.3g} > {tolerance:g}")
    if result["unwritten"]:
        reasons.append(result["unwritten"][0])
    if result.get("nondeterministic_launches"):
        n, r = result["nondeterministic_launches"], result["repeats"]
        reasons.append(f"{n} of {r - 1} repeated launches differ bitwise")
    return "; ".join(reasons)

"""``Autotuner.compile_only``: every candidate of a ``ws_solver.triton.autotune`` kernel built
for a named target, without a GPU, with what ptxas makes of each (registers, spills).

No launch means no arguments to bind: the caller names the kernel's signature (Triton's
``ASTSource`` types, e.g. ``{"a_ptr": "*fp16", "M": "i32", "BLOCK": "constexpr"}``) and its
constexprs and launch options; each candidate compiles through ``triton.compile`` under its
drop-in settings (``launcher.build_scope``), as a launch would, into the candidate's own Triton
cache folder. Nothing is timed: ptxas's count is the evidence a CPU has (a spilling kernel ran
several times slower on the H200), the choice among kernels that do not spill is timing's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...core.candidates import Candidate
from ...model.target import target_for
from ..toolchain.binary_usage import ptx_usage
from .launcher import build_scope, layers


@dataclass
class Built:
    """One candidate built for a target: what the drop-in built, and what ptxas says."""

    candidate: str
    strategy_used: str | None = None
    binary: str | None = None  # sha256 of the cubin, 16 hex digits
    registers: int | None = None
    spilled_bytes: int | None = None
    error: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        if self.error:
            return f"{self.candidate}: failed: {self.error}"
        spill = f"{self.spilled_bytes} B spilled" if self.spilled_bytes else "no spill"
        return (
            f"{self.candidate}: {self.strategy_used} {self.registers} registers, {spill} "
            f"(binary {self.binary})"
        )


def compile_candidates(
    fn: Any,
    candidates: Sequence[Candidate],
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None = None,
    target: str | int = "sm_90",
    enable_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> list[Built]:
    """Build each candidate of the kernel ``fn`` (a ``@triton.jit`` function, or a decorator
    over one) for ``target``; a candidate that fails is listed with its error."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    jit, _ = layers(fn)
    capability = target_for(target).capability
    out = []
    for candidate in candidates:
        source = ASTSource(jit, dict(signature), constexprs=dict(constexprs or {}))
        opts = dict(options)
        if candidate.stage_delta:
            opts["num_stages"] = candidate.num_stages(opts.get("num_stages", 3))
        try:
            with build_scope(candidate, dict(enable_options or {})):
                compiled = triton.compile(
                    source, target=GPUTarget("cuda", capability, 32), options=opts
                )
            usage = ptx_usage(compiled.asm["ptx"], capability)
        except Exception as e:
            first = (str(e).strip().splitlines() or [""])[0][:300]
            out.append(Built(candidate.name, error=f"{type(e).__name__}: {first}"))
            continue
        report = getattr(compiled.metadata, "ws_solver", None)
        used = report.get("strategy_used") if isinstance(report, dict) else "stock"
        out.append(
            Built(
                candidate.name,
                strategy_used=used,
                binary=hashlib.sha256(compiled.asm["cubin"]).hexdigest()[:16],
                registers=usage.registers,
                spilled_bytes=usage.spilled_bytes,
            )
        )
    return out

"""What Triton's lowering past TTGIR reads besides its module and options: the knobs and
instrumentation hooks of the process it runs in (make_llir, make_ptx; 3.6.0 and 3.9.0).

Two processes that agree on `fingerprint` lower the same TTGIR with the same options to the
same LLVM IR and PTX: the drop-in takes the guard child's LLVM IR and PTX only then.
"""

from __future__ import annotations

from typing import Any


def fingerprint() -> str:
    """The knobs make_llir/make_ptx read, and whether instrumentation hooks are installed."""
    from triton import knobs

    parts = [
        _knob_values(knobs.compilation),
        repr(getattr(knobs.compilation, "instrumentation_mode", None)),
        _knob_values(knobs.nvidia),
        repr(_instrumented()),
    ]
    return "\n".join(parts)


def _knob_values(group: Any) -> str:
    """A knob group's values, sorted by name; the tool knobs (ptxas, cuobjdump) left out:
    reading one runs the tool, and ptxas's path is in the cubin key already."""
    from triton.knobs import env_nvidia_tool

    values = [
        (name, repr(getattr(group, name)))
        for name, knob in group.knob_descriptors.items()
        if not isinstance(knob, env_nvidia_tool)
    ]
    return repr(sorted(values))


def _instrumented() -> bool:
    """Whether an instrumentation hook (Proton's, say) changes the lowering in this process:
    3.6's ``CUDABackend.instrumentation``, 3.9's ``triton._instrumentation`` callbacks."""
    from triton.backends.nvidia.compiler import CUDABackend

    if getattr(CUDABackend, "instrumentation", None) is not None:
        return True
    try:
        from triton import _instrumentation
    except ImportError:
        return False
    return bool(getattr(_instrumentation, "_callbacks", None))

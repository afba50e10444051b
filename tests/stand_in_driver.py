"""A CUDA driver stand-in for the tests that compile through Triton's JIT on the CPU."""

from __future__ import annotations


class StandInDriver:
    """Enough of a CUDA driver for the JIT to compile for sm_90 without a GPU."""

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", 90, 32)

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device=None) -> int:
        return 0

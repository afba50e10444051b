"""Kernel corpus: Triton kernels written for ws_solver and their dumped TTGIR."""

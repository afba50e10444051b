"""`ws_solver.triton.autotune`: candidate builds of a kernel, checked and timed at launch.
(Named `autotuning` so that the package does not shadow the `autotune` decorator.)"""

"""Benchmarks and probes that need no GPU: the TTGIR reader, the heuristic, the solver and their
scale, the execution backends, what ptxas and Triton's lowering make of plans, start-up cost.
Imports only from `common`."""

"""Benchmarks and measurement tools, run from the repository root as modules:
``python -m benchmarks.bench_solver --help``. What they measured is archived under
``benchmarks/results/`` (one folder per run, indexed in its README.md)."""

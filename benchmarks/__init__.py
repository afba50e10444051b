"""Benchmarks and measurement tools, run from the repository root as modules:
``python -m benchmarks.cpu.bench_solver --help``. The folders are layers, bottom to top: each
module imports only from its own folder or the ones below (tests/test_benchmark_layers.py).

- ``common/``: what the others share (the results archive, statistics, the bench's strategies
  and sweep variants, compiling one variant);
- ``cpu/``: benchmarks and probes that need no GPU (reader, heuristic, solver, scale,
  backends, ptxas and lowering probes, start-up cost);
- ``analysis/``: reports and fits over measured results (results.md, against stock,
  calibration, the sweep's fit, summaries);
- ``gpu/``: what runs on the GPU machine (bench, plan sweep, profiling, hand-edited IR) and
  its shell scripts and JSON inputs;
- ``recorded/``: the scripts each archived run was made with, one folder per run (plain
  scripts, not modules).

What they measured is archived under ``benchmarks/results/`` (one folder per run, indexed in its
README.md; data only)."""

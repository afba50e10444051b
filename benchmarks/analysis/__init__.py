"""Reports and fits over measured results: the bench's results.md, ws_solver against stock, the
cost model's calibration and the plan sweep's fit, Nsight Compute and config-space summaries.
Imports from `common` and `cpu`, never from `gpu`."""

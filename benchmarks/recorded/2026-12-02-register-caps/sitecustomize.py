"""Experiment hooks for the register-cap probe (imported by Python at start when this folder
is on PYTHONPATH): WS_EXP_REG_SCALE sets the model's register scale in every process;
WS_EXP_REGION_REGS sets every partition region's requestedRegisters."""

import os

if os.environ.get("WS_EXP_REG_SCALE"):
    from ws_solver.model.cost_params import PARAMS

    object.__setattr__(PARAMS, "register_scale_percent", int(os.environ["WS_EXP_REG_SCALE"]))

if os.environ.get("WS_EXP_REGION_REGS"):
    from ws_solver.triton.rewrites import chain as rewrites

    _apply = rewrites.apply_register_requests
    _region = int(os.environ["WS_EXP_REGION_REGS"])

    def _forced(text, requests):
        requests = [[(p, r if p == 0 else _region) for p, r in parts] for parts in requests]
        return _apply(text, requests)

    rewrites.apply_register_requests = _forced

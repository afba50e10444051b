"""Why measured mode's tuning read stock's binary ~10% slower than the bench did on
gemm_tma_indesc t128x128x128 w4 s2 (2026-12-07-measured-timer-h100): stock timed in the
bench's batches (six back to back, twice), measured mode's first launch (its tuning), then
stock and measured's pick in alternating pairs of batches, and the host time per launch of
each, in one process; the GPU's clocks and power logged beside it (nvidia-smi, started by
run.sh). Usage: exp.py OUT_JSON [family]. Results: benchmarks/results/2026-12-07-power-cap-h100."""

import json
import os
import sys
import time

out_path = sys.argv[1]
family = sys.argv[2] if len(sys.argv) > 2 else "gemm_tma_indesc"
config = {
    "BLOCK_M": 128,
    "BLOCK_N": 128,
    "BLOCK_K": 128,
    "GROUP_M": 8,
    "num_stages": 2,
    "num_warps": 4,
}
import torch  # noqa: E402

import ws_solver.triton as wst  # noqa: E402
from benchmarks.gpu import bench_measured as bm  # noqa: E402
from corpus import kernels as ck  # noqa: E402
from ws_solver.triton.autotuning import autotuner  # noqa: E402

module = ck.load(family)
row = {"family": family, "config": config}
inputs = bm.make_inputs(row, module)
log: list = []


def stamp(what, **kw):
    log.append({"t": time.time(), "what": what, **kw})
    print(what, kw, flush=True)


def timed(name, rounds=6):
    bm._mode(name)
    module.launch(config, inputs)
    torch.cuda.synchronize()
    ms = [bm.batch_ms(lambda: module.launch(config, inputs), 25.0) for _ in range(rounds)]
    stamp(f"{name} x{rounds}", ms=[round(x, 4) for x in ms])
    return ms


stamp("start", tuning_dir=os.environ.get("WS_SOLVER_CACHE_DIR"))
timed("stock")
time.sleep(1.0)
timed("stock")
bm._mode("measured")
t0 = time.perf_counter()
module.launch(config, inputs)
torch.cuda.synchronize()
rep = autotuner.tuning_reports()[-1].to_dict()
stamp(
    "measured first launch",
    s=round(time.perf_counter() - t0, 3),
    winner=rep["winner"],
    candidates=[
        (c["name"], c["status"], c["binary"], [round(x, 4) for x in c["ms"]])
        for c in rep["candidates"]
    ],
)
for _ in range(3):
    timed("stock", 2)
    timed("measured", 2)


def cpu_us(name, n=200):
    """Host microseconds per launch call (no sync inside), and the GPU ms per launch."""
    bm._mode(name)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        module.launch(config, inputs)
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    stamp(f"{name} host per launch", us=round(host, 1), total_s=round(time.perf_counter() - t, 3))


cpu_us("stock")
cpu_us("measured")
wst.disable()
with open(out_path, "w") as f:
    json.dump(log, f, indent=1)

"""How fast a kernel's time follows the GPU's power state, read launch by launch (an event
before and after every launch of a back-to-back stream, no host gap): the curve from a cool
start, the switch from one kernel to another, the recovery after an idle gap, and what a
per-candidate warm-up before each timed batch reads against each kernel's own sustained
time. For choosing the state the bench and measured mode time (docs/dropin.md, "power
state"). Usage: exp.py OUT_JSON FAMILY NAME. Results:
benchmarks/results/2026-12-07-power-state-h100."""

import json
import statistics
import sys
import time
from pathlib import Path

import torch

from benchmarks.gpu import bench_measured as bm
from benchmarks.gpu import measured_space
from corpus import kernels as ck

out_path, family, name = sys.argv[1], sys.argv[2], sys.argv[3]
row = next(
    r
    for r in measured_space.load(Path("benchmarks/gpu/measured_space.json"))
    if r["family"] == family and r["name"] == name
)
module = ck.load(family)
inputs = bm.make_inputs(row, module)
config = row["config"]
plus = {**config, "num_stages": config["num_stages"] + 1}
VARIANTS = {  # name: (drop-in mode, config)
    "stock": ("stock", config),
    "optimal": ("optimal", config),
    "optimal~s+1": ("optimal", plus),
}
log: list = []


def use(variant):
    mode, cfg = VARIANTS[variant]
    bm._mode(mode)
    return lambda: module.launch(cfg, inputs)


def series(variant, ms):
    """Per-launch ms of ``variant`` launched back to back for about ``ms``."""
    call = use(variant)
    call()
    torch.cuda.synchronize()
    t = time.perf_counter()
    call()
    torch.cuda.synchronize()
    n = max(3, int(ms / max((time.perf_counter() - t) * 1e3, 0.05)))
    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    events[0].record()
    for i in range(n):
        call()
        events[i + 1].record()
    torch.cuda.synchronize()
    return [round(events[i].elapsed_time(events[i + 1]), 4) for i in range(n)]


def stamp(what, **kw):
    log.append({"t": time.time(), "what": what, **kw})
    short = {
        k: (v[:3] + ["..."] + v[-3:] if isinstance(v, list) and len(v) > 8 else v)
        for k, v in kw.items()
    }
    print(what, short, flush=True)


for v in VARIANTS:  # builds and first launches out of the way
    use(v)()
torch.cuda.synchronize()
stamp("built", variants=list(VARIANTS))

# 1. From a cool start: each variant alone for ~800 ms.
for v in ["stock", "optimal~s+1"]:
    time.sleep(2.0)
    stamp("cool start", variant=v, ms=series(v, 800))
# 2. Switches, no gap: stock, optimal~s+1, stock, optimal, stock (~300 ms each).
time.sleep(2.0)
for v in ["stock", "optimal~s+1", "stock", "optimal", "stock", "optimal~s+1"]:
    stamp("switch", variant=v, ms=series(v, 300))
# 3. Recovery: capped by ~300 ms of stock, an idle gap, then ~40 ms of stock.
for gap in [0, 30, 100, 300, 1000]:
    series("stock", 300)
    time.sleep(gap / 1000)
    stamp("after gap", gap_ms=gap, ms=series("stock", 40))
# 4. Protocols, each over the three variants in rotated rounds (6 rounds): a 25 ms batch as
# the tuning times now; a warm-up of W ms of the same variant right before each 25 ms batch.
time.sleep(2.0)
for warm in [0, 50, 100]:
    times = {v: [] for v in VARIANTS}
    names = list(VARIANTS)
    for r in range(6):
        for v in names[r % 3 :] + names[: r % 3]:
            if warm:
                series(v, warm)
            times[v].append(statistics.mean(series(v, 25)))
    stamp(
        "protocol",
        warm_ms=warm,
        medians={v: round(statistics.median(t), 4) for v, t in times.items()},
        rounds=times,
    )
bm._mode("stock")
with open(out_path, "w") as f:
    json.dump(log, f, indent=1)

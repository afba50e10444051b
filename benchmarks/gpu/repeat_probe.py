"""Launch compiled variants many times on the same inputs and report where outputs differ
bitwise (a race), on the GPU machine. Each argument is KERNEL:CONFIG:STRATEGY (the bench's
strategy names, e.g. none, forced, triton, none~ov0); the sweep's configs are known too,
and those of every extra-configs JSON named with --configs.

    python3 benchmarks/gpu/repeat_probe.py attention_fwd:d128_m128n64_w4_s2_ahead:none
    python3 benchmarks/gpu/repeat_probe.py --configs more.json attention_fwd:NAME:none~ov0

Writes $OUT/racy.json (or ./racy.json): per variant, its cubin digest, how many of the
launches after the first differ from it, and up to 8 of them (output, elements, largest
difference, first index)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.getcwd())

LAUNCHES = 200
SWEEP = "benchmarks/results/2026-12-04-configspace-h200/sweep_configs.json"


def differences(first: list, now: list, names: tuple[str, ...], launch: int) -> list[dict]:
    found = []
    for name, a, b in zip(names, first, now, strict=True):
        bad = ~((a == b) | (a.isnan() & b.isnan()))
        if bad.any():
            found.append(
                {
                    "launch": launch,
                    "out": name,
                    "elements": int(bad.sum()),
                    "max_abs": float((a - b)[bad].abs().nan_to_num(1e9).max()),
                    "first_index": bad.nonzero()[0].tolist(),
                }
            )
    return found


def probe(kernel: str, config: str, strategy: str) -> dict:
    import torch

    from benchmarks.common.bench_compile import Job, compile_job
    from benchmarks.gpu import verify_gpu
    from benchmarks.gpu.bench_gpu import bound
    from corpus import kernels as corpus_kernels

    module = corpus_kernels.load(kernel)
    cfg = module.CONFIGS[config]
    compiled, info = compile_job(Job(kernel, config, strategy), Path(tempfile.mkdtemp()), 90)
    record: dict = {"binary": info.get("binary"), "error": info.get("error")}
    if compiled is None:
        return record
    names = verify_gpu.outputs_of(kernel)
    diffs: list[dict] = []
    with bound(module, compiled):
        inputs = module.make_inputs(cfg, 1024, 0)
        first = None
        for launch in range(LAUNCHES):
            verify_gpu.poison(inputs, names)
            module.launch(cfg, inputs)
            torch.cuda.synchronize()
            now = [inputs[n].float().clone() for n in names]
            if first is None:
                first = now
            else:
                diffs += differences(first, now, names, launch)
    record["differing_launches"] = len({d["launch"] for d in diffs})
    record["examples"] = diffs[:8]
    return record


def main() -> int:
    from benchmarks.common.bench_compile import add_extra_configs

    specs, extra = sys.argv[1:], [SWEEP]
    if {"-h", "--help"} & set(specs):
        print(__doc__)
        return 0
    while specs[:1] == ["--configs"] and len(specs) > 1:
        extra.append(specs[1])
        specs = specs[2:]
    wrong = [s for s in specs if s.count(":") != 2]
    if not specs or wrong:
        print(
            f"repeat_probe: expected KERNEL:CONFIG:STRATEGY, got {wrong or 'nothing'}",
            file=sys.stderr,
        )
        return 2
    for path in extra:
        add_extra_configs(path)
    out = {}
    for spec in specs:
        kernel, config, strategy = spec.split(":")
        out[spec] = record = probe(kernel, config, strategy)
        print(spec, record.get("differing_launches"), record.get("examples", [])[:3], flush=True)
    Path(os.environ.get("OUT", "."), "racy.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

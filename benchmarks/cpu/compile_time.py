"""Drop-in compile time against stock Triton's, per kernel, on the CPU (issue 49's target:
`optimal` median <= 1.5x stock's, p90 <= 2x, fresh caches).

    python -m benchmarks.cpu.compile_time --out FILE.jsonl [--slice ci|all] [--every K]
        [--target sm90] [--strategies builtin,optimal] [--mode first|sequential]

Two ways a user meets a compile, each timed as `triton.compile` from source to cubin with a
fresh Triton cache and an empty plan cache (``enable()`` inside the timed span for the
drop-in's strategies, as `bench_compile.compile_job` does):

- ``first``: every (config, strategy) in a process of its own: the first compile of a
  process, which pays the imports, the guard's helper start and the solver's import.
- ``sequential``: one process per strategy compiles every config in turn (an autotuning
  sweep, a model's kernels): those one-time costs are paid once, by the first kernel.

Strategies of one config run one after another (the order alternates by config), never at
once: the machine's other work shows up in both. Writes a record per (config, strategy) and
prints the ratios' median and p90 over the configs where both compiled.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cpu.configspace_records import percentile

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"sm90": 90, "sm100": 100}


def configs(slice_name: str, every: int) -> list[str]:
    """Config keys (family.name) of the slice, every `every`-th in the space's sample order."""
    from corpus.configspace import sample_order, select

    return [e.key for e in sample_order(select(slice_name, None))][:: max(1, every)]


def compile_one(key: str, strategy: str, capability: int) -> dict:
    """One compile in this process, fresh caches; its record."""
    import os

    from benchmarks.common.bench_compile import Job, compile_job
    from corpus import configspace

    configspace.register(configspace.space(key.split(".", 1)[0]))
    family, name = key.split(".", 1)
    with tempfile.TemporaryDirectory(prefix="ws_ct_") as cache:
        os.environ["WS_SOLVER_CACHE_DIR"] = str(Path(cache) / "plans")
        compiled, info = compile_job(Job(family, name, strategy), Path(cache), capability)
    dropin = info.get("dropin") or {}
    return {
        "config": key,
        "strategy": strategy,
        "capability": capability,
        "ok": compiled is not None,
        "compile_s": info.get("compile_s"),
        "error": info.get("error"),
        "strategy_used": dropin.get("strategy_used"),
        "rule": (dropin.get("decision") or {}).get("rule"),
    }


def _child(keys: list[str], strategy: str, capability: int) -> None:
    """Compile `keys` in turn in this process; a JSON line per compile on stdout."""
    for key in keys:
        print(json.dumps(compile_one(key, strategy, capability)), flush=True)


def _run_child(keys: list[str], strategy: str, capability: int) -> list[dict]:
    cmd = [sys.executable, "-m", "benchmarks.cpu.compile_time", "--child", strategy]
    cmd += ["--capability", str(capability), *keys]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if len(rows) < len(keys):
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        done = {r["config"] for r in rows}
        rows += [
            {"config": k, "strategy": strategy, "ok": False, "error": f"child: {tail[0][:200]}"}
            for k in keys
            if k not in done
        ]
    return rows


def ratios(rows: list[dict], ours: str = "optimal", stock: str = "builtin") -> list[float]:
    """ours / stock compile time per config where both compiled."""
    by = {(r["config"], r["strategy"]): r for r in rows if r.get("ok")}
    return [
        by[(c, ours)]["compile_s"] / by[(c, stock)]["compile_s"]
        for c, s in by
        if s == stock and (c, ours) in by and by[(c, stock)]["compile_s"]
    ]


def summary(rows: list[dict], ours: str = "optimal", stock: str = "builtin") -> str:
    values = ratios(rows, ours, stock)
    if not values:
        return "no config compiled under both"
    times = {
        s: [r["compile_s"] for r in rows if r.get("ok") and r["strategy"] == s]
        for s in (stock, ours)
    }
    return (
        f"n = {len(values)}: {ours} / {stock} median {statistics.median(values):.2f}x, "
        f"p90 {percentile(values, 90):.2f}x, max {max(values):.2f}x; "
        f"{stock} median {statistics.median(times[stock]):.2f} s, "
        f"{ours} median {statistics.median(times[ours]):.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--slice", default="ci", choices=("ci", "all"))
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--target", default="sm90", choices=tuple(TARGETS))
    parser.add_argument("--strategies", default="builtin,optimal")
    parser.add_argument("--mode", default="first", choices=("first", "sequential"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--capability", type=int, default=90, help=argparse.SUPPRESS)
    parser.add_argument("keys", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.keys, args.child, args.capability)
        return 0
    if args.out is None:
        parser.error("--out is required")
    strategies = args.strategies.split(",")
    capability = TARGETS[args.target]
    keys = configs(args.slice, args.every)
    rows: list[dict] = []
    with args.out.open("w") as f:

        def keep(new: list[dict]) -> None:
            for r in new:
                r["mode"] = args.mode
                f.write(json.dumps(r) + "\n")
            f.flush()
            rows.extend(new)

        if args.mode == "sequential":
            for strategy in strategies:
                keep(_run_child(keys, strategy, capability))
        else:
            for i, key in enumerate(keys):
                order = strategies if i % 2 == 0 else strategies[::-1]
                for strategy in order:
                    keep(_run_child([key], strategy, capability))
                print(key, [r.get("compile_s") for r in rows[-len(order) :]], flush=True)
    print(summary(rows, strategies[-1], strategies[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

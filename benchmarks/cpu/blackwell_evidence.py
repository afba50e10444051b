"""Rerun the model on the published sm_100 pairs (docs/blackwell-evidence.json) and rewrite
each runnable record's model answer: per Triton version and strategy (none, heuristic,
optimal) the II, whether the loop was specialized and why, what bound the II and the unit
times; the modeled direction of the pair; `agrees`; and the same for the record's `checks`
(other dumps run beside it, which do not count towards the agreement).

    python -m benchmarks.cpu.blackwell_evidence [--check]

In-process and CPU only: the TTGIR dumps under corpus/evidence are the input, so one
virtualenv serves both Triton versions (`triton=` selects the lowering rules). --check
exits 1 if the JSON on disk differs from what the model says now (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from ws_solver import ir
from ws_solver.pipeline.partition import SolveOptions, partition_module

REPO = Path(__file__).resolve().parents[2]
EVIDENCE = REPO / "docs" / "blackwell-evidence.json"
VERSIONS = ("3.9.0", "3.6.0")
STRATEGIES = ("none", "heuristic", "optimal")
OPTIONS = SolveOptions(time_limit=2, cache=False, margin=None, wall_clock=False)


def dump_path(name: str, version: str) -> Path:
    """A dump named like "gemm_tma.t128x128x64_w4_s4.sm100" (or its file name) under a
    Triton version's evidence folder."""
    stem = Path(name).name.removesuffix(".ttgir")
    return REPO / "corpus" / "evidence" / f"triton-{version}" / f"{stem}.ttgir"


def strategy_answer(path: Path, version: str, strategy: str) -> dict:
    """The model's plan of the dump's (first) loop under one strategy."""
    module = ir.parse(path.read_text(encoding="utf-8"))
    report = partition_module(module, strategy, target="sm_100", options=OPTIONS, triton=version)[0]
    cost = report.cost or {}
    return {
        "ii": report.ii,
        "specialized": report.specialized,
        "reason": report.reason,
        "bound_by": cost.get("bound_by"),
        "units": dict(sorted((cost.get("units") or {}).items())),
    }


def direction(answers: dict) -> str:
    """ "ws", "non_ws" or "tie": the optimum against the one-partition plan."""
    none, best = answers["none"], answers["optimal"]
    if best["specialized"] and best["ii"] < none["ii"]:
        return "ws"
    return "tie" if best["ii"] == none["ii"] else "non_ws"


def dump_answers(name: str) -> dict:
    """Per version, each strategy's answer and the modeled direction of one dump."""
    out: dict = {}
    for version in VERSIONS:
        answers = {s: strategy_answer(dump_path(name, version), version, s) for s in STRATEGIES}
        out[f"triton-{version}"] = {**answers, "modeled_faster": direction(answers)}
    return out


def pair_dumps(model: dict) -> list[str]:
    """The dumps a record's pair maps to (the ones its agreement is judged on)."""
    if "matching_configs" in model:
        return list(model["matching_configs"])
    return sorted({Path(d).name.removesuffix(".ttgir") for d in model["dumps"]})


def rerun(record: dict, commit: str) -> dict:
    """The record with its model answer recomputed."""
    model = dict(record["model"])
    per_dump = {name: dump_answers(name) for name in pair_dumps(model)}
    directions = {a[v]["modeled_faster"] for a in per_dump.values() for v in a}
    first = next(iter(per_dump.values()))
    for version in VERSIONS:
        key = f"triton-{version}"
        model[key] = {s: first[key][s] for s in STRATEGIES}
    model["modeled_faster"] = directions.pop() if len(directions) == 1 else "mixed"
    model["agrees"] = model["modeled_faster"] == record["measured_faster"]
    if len(per_dump) > 1:
        model["per_dump"] = {n: {v: a[v]["modeled_faster"] for v in a} for n, a in per_dump.items()}
    checks = model.get("checks") or {}
    model["checks"] = {
        name: {**check, "modeled_faster": {v: a["modeled_faster"] for v, a in answers.items()}}
        for name, check in checks.items()
        for answers in [dump_answers(name)]
    }
    if not model["checks"]:
        del model["checks"]
    model["ws_solver_commit"] = commit
    return {**record, "model": model}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    records = json.loads(EVIDENCE.read_text(encoding="utf-8"))
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.strip()
    new = [rerun(r, commit) if r.get("model") else r for r in records]
    runnable = [r for r in new if r.get("model")]
    agree = sum(r["model"]["agrees"] for r in runnable)
    print(f"agreement: {agree} of {len(runnable)}")
    for r in runnable:
        print(
            f"  {r['id']}: modeled {r['model']['modeled_faster']}, measured {r['measured_faster']}"
        )
    if args.check:
        strip = [{**r, "model": {**r["model"], "ws_solver_commit": None}} for r in runnable]
        old = [
            {**r, "model": {**r["model"], "ws_solver_commit": None}}
            for r in records
            if r.get("model")
        ]
        return 0 if strip == old else 1
    EVIDENCE.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

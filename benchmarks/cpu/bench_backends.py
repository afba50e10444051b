"""Loops per second against workers, the local process pool against Ray, and Ray's overhead
per task.

    python -m benchmarks.cpu.bench_backends --out DIR [--workers 1,2] [--repeats 3]
        [--time-limit 2] [--corpus corpus/ttgir] [--noop-tasks 200]

For each backend and worker count: `compare` over the corpus (each warp-specialized loop one
task, as `ws-solver compare --backend B --jobs W` runs it), timed from the first submit to
the last result, `--repeats` times; a Ray instance's start-up (a private local one with W
CPUs) is timed apart. Every run's JSON outside `timing` must equal the first run's: checked
and recorded. Overhead: `--noop-tasks` tasks that return at once, through `Backend.map`,
twice per backend (the first run starts the workers); the second run's wall time per task is
the overhead. The load average before and after is recorded: on a shared machine it says how
much of the CPU the run had. Writes DIR/results.json and DIR/results.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import benchmarks
import ws_solver
from benchmarks.common import archive
from ws_solver.backends import open_backend
from ws_solver.core.options import SURVEY_TIME_LIMIT
from ws_solver.pipeline.comparison import deterministic_part
from ws_solver.report import compare as cmp
from ws_solver.triton.toolchain.versions import planning_version

ROOT = Path(__file__).resolve().parents[2]


def noop(x: int) -> int:
    return x


def compare_once(backend, corpus: Path, time_limit: float) -> tuple[int, float, str]:
    """(loops, wall seconds, JSON outside timing) of one compare over `corpus`."""
    start = time.perf_counter()
    document = ws_solver.compare(
        corpus, time_limit=time_limit, workers=1, backend=backend, triton=planning_version()
    )
    wall = time.perf_counter() - start
    return len(document["loops"]), wall, cmp.to_json(deterministic_part(document))


def measure(name: str, workers: int, args: argparse.Namespace, reference: list) -> dict:
    """Corpus throughput and no-op overhead on one backend with `workers` workers."""
    start = time.perf_counter()
    with open_backend(name, workers, None, (ws_solver, benchmarks)) as backend:
        startup = time.perf_counter() - start
        runs = []
        for _ in range(args.repeats):
            loops, wall, text = compare_once(backend, args.corpus, args.time_limit)
            if not reference:
                reference.append(text)
            runs.append({"loops": loops, "wall_s": round(wall, 3), "same": text == reference[0]})
            print(f"{name} x{workers}: {loops} loops in {wall:.1f} s", flush=True)
        overhead = []
        for _ in range(2):
            t0 = time.perf_counter()
            backend.map(noop, range(args.noop_tasks))
            overhead.append((time.perf_counter() - t0) / args.noop_tasks)
        stats = backend.stats.to_dict()
    walls = [r["wall_s"] for r in runs]
    loops = runs[0]["loops"]
    return {
        "backend": name,
        "workers": workers,
        "startup_s": round(startup, 3),
        "runs": runs,
        "median_wall_s": statistics.median(walls),
        "loops_per_s": round(loops / statistics.median(walls), 3),
        "identical_json": all(r["same"] for r in runs),
        "noop_ms_per_task_first": round(1000 * overhead[0], 3),
        "noop_ms_per_task": round(1000 * overhead[1], 3),
        "workers_seen": stats["workers"],
    }


def display(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def markdown(meta: dict, rows: list[dict]) -> str:
    lines = [
        f"# compare on the local pool and on Ray, {meta['date']} (revision {meta['revision']})",
        "",
        f"- machine: {meta['machine']}; load average (1, 5, 15 min) {meta['load_before']} "
        f"before, {meta['load_after']} after (above the cores in use: the run was shared)",
        f"- Python {meta['python']}, Ray {meta['ray']}; corpus {meta['corpus']} "
        f"({meta['loops']} loops), time limit {meta['time_limit']:g} deterministic s per "
        f"loop, 1 CP-SAT worker per loop; {meta['repeats']} runs each (median)",
        "- loops/s: corpus loops over the run's wall time (submit to last result); Ray's "
        "start-up (a private local instance) is apart. JSON: every run's compare JSON outside "
        "`timing` equal to the first run's.",
        f"- overhead: {meta['noop_tasks']} tasks that return at once; the second pass "
        "(workers already up) per task, and the first (starting them).",
        "",
        "| backend | workers | loops/s | median wall s | runs (s) | same JSON | start-up s "
        "| no-op ms/task | first pass ms/task |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        runs = ", ".join(f"{x['wall_s']:.1f}" for x in r["runs"])
        lines.append(
            f"| {r['backend']} | {r['workers']} | {r['loops_per_s']:.2f} | "
            f"{r['median_wall_s']:.1f} | {runs} | {r['identical_json']} | {r['startup_s']:.1f} "
            f"| {r['noop_ms_per_task']:.2f} | {r['noop_ms_per_task_first']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=SURVEY_TIME_LIMIT)
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus" / "ttgir")
    parser.add_argument("--noop-tasks", type=int, default=200)
    parser.add_argument("--backends", default="local,ray")
    args = parser.parse_args(argv)
    import ray

    load_before = [round(x, 2) for x in os.getloadavg()]
    reference: list[str] = []
    rows = [
        measure(name, int(w), args, reference)
        for w in args.workers.split(",")
        for name in args.backends.split(",")
    ]
    revision = archive.git_revision()
    meta = {
        "date": datetime.date.today().isoformat(),
        "revision": revision,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "ray": ray.__version__,
        "corpus": display(args.corpus),
        "loops": rows[0]["runs"][0]["loops"],
        "time_limit": args.time_limit,
        "repeats": args.repeats,
        "noop_tasks": args.noop_tasks,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"meta": meta, "rows": rows}
    (args.out / "results.json").write_text(json.dumps(payload, indent=1) + "\n")
    text = markdown(meta, rows)
    (args.out / "results.md").write_text(text)
    print(text)
    return 0 if all(r["identical_json"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

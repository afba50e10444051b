"""Scale benchmark: the heuristic and CP-SAT on loops from about 30 to 3,600 ops.

    python -m benchmarks.cpu.bench_scale [--time-limit 10] [--workers 2] [--runs 3]
        [--only SUBSTRING] [--out benchmarks/results/DATE-scale] [--keep-ttgir DIR]
        [--note TEXT]

The loops are the attention forward loop of the corpus unrolled UNROLL times
(`corpus/kernels/attention_unrolled.py`), dumped with `corpus/dump.py`'s machinery for sm_90
and sm_100 into a temporary folder (the triton extra is needed, no GPU; `--keep-ttgir` keeps
the files). Each loop is then measured in a fresh process, so that its peak memory is its
own:
- `heuristic_s`: the heuristic (`decide`) alone, with cold caches, median of --runs;
- the two strategies as `ws-solver partition` runs them (`pipeline.plan_loop`, plan cache
  off): the wall time of each, and for `optimal` CP-SAT's status, gap at the limit, wall and
  deterministic time to its first solution and (when proven) to the proof;
- `peak_rss_mb`: the process's peak resident memory (`base_rss_mb`: after the imports).
Writes scale.json, scale.md, scale.png and manifest.json under --out. Wall times depend on
the machine and its load (recorded); deterministic times do not.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ws_solver.core.options import DEFAULT_TIME_LIMIT

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "attention_unrolled"


@dataclass(frozen=True)
class Instance:
    """One loop of the benchmark: a tile of the unrolled kernel, an unroll factor, a target."""

    tile: str  # attention_unrolled config name without its `_uN` suffix
    unroll: int
    target: str  # "sm90" or "sm100", as corpus/dump.py names targets

    @property
    def config(self) -> str:
        return f"{self.tile}_u{self.unroll}"

    @property
    def file(self) -> str:
        return f"{KERNEL}.{self.config}.{self.target}.ttgir"


# 31 ops per unrolled step on sm_100, 28 on sm_90. The corpus's d64 tile (its tensor memory
# holds 3 steps on sm_100); a 32-wide tile whose tensor memory holds 5 steps (155 ops) on
# sm_100; a 16-wide one whose buffers fit shared memory up to 107 steps (2,996 ops) on sm_90.
# Larger loops do not fit the target: they time the heuristic and the infeasibility checks.
CORPUS_TILE, MID_TILE, SMALL_TILE = "d64_m128n64_w4_s3", "d32_m128n32_w4_s2", "d16_m128n16_w4_s2"
INSTANCES: tuple[Instance, ...] = (
    *(Instance(CORPUS_TILE, u, "sm100") for u in (1, 2, 4)),
    *(Instance(MID_TILE, u, "sm100") for u in (1, 2, 3, 4, 5)),
    *(Instance(SMALL_TILE, u, "sm100") for u in (8, 32, 96)),
    *(Instance(CORPUS_TILE, u, "sm90") for u in (1, 2, 4)),
    *(Instance(SMALL_TILE, u, "sm90") for u in (1, 4, 16, 32, 64, 96, 107, 128)),
)


def generate(instances: list[Instance], folder: Path) -> list[Path]:
    """Dump each instance's TTGIR into `folder` as `corpus/dump.py` dumps the corpus."""
    from corpus import dump

    prefixes = dump.path_prefixes()
    paths = []
    for inst in instances:
        text = dump.capture(dump.Job(KERNEL, inst.config, inst.target))
        path = folder / inst.file
        dump.write_atomic(path, dump.relativize_locs(text, prefixes))
        paths.append(path)
    return paths


# -- one loop, in its own process --------------------------------------------------------------
def rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, time_limit: float, workers: int, runs: int) -> dict:
    """Every figure of one row, for the first warp-specialized loop of `path`."""
    import ws_solver.encode  # noqa: F401  (imported before any timing: once per process)
    from benchmarks.cpu.bench_heuristic import clear_caches
    from ws_solver import ir
    from ws_solver.heuristic import decide
    from ws_solver.model.cost_table import cost_table
    from ws_solver.model.dfg import build_graphs
    from ws_solver.model.kinds import NodeRole
    from ws_solver.model.target import target_for
    from ws_solver.pipeline.partition import SolveOptions, plan_loop

    base = rss_mb()
    graph = build_graphs(ir.parse(path.read_text()))[0]
    target = target_for(graph.target)
    samples, cpu = [], []
    for _ in range(runs):
        clear_caches()
        start, start_cpu = time.perf_counter(), time.process_time()
        plan, reason = decide(graph, target)
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    row = {
        "file": path.name,
        "target": target.name,
        "ops": sum(1 for n in graph.nodes if n.role == NodeRole.OP),
        "nodes": len(graph.nodes),
        "edges": len(graph.edges),
        "heuristic_s": statistics.median(samples),
        "heuristic_cpu_s": statistics.median(cpu),
        "heuristic_reason": reason,
    }
    # The strategies as `ws-solver partition` runs them: the limit bounds their wall clock.
    shipped = SolveOptions(time_limit=time_limit, workers=workers, cache=False)
    for strategy in ("heuristic", "optimal"):
        clear_caches()
        start = time.perf_counter()
        plan, reason, details = plan_loop(graph, target, strategy, shipped)
        row[f"{strategy}_wall_s"] = time.perf_counter() - start
        row[f"{strategy}_reason"] = reason
        row[f"{strategy}_stopped_by"] = details.get("stopped_by", "")
        row[f"{strategy}_ii"] = _ii(plan, graph, target)
    row["optimal_status"], row["optimal_gap"] = details.get("status"), details.get("gap")
    # CP-SAT again, bounded by its deterministic time only: what the model achieves in the
    # limit whatever the machine's load (the same on every machine).
    clear_caches()
    plan, _, details = plan_loop(graph, target, "optimal", replace(shipped, wall_clock=False))
    row.update(_solver_columns(details))
    row["ii"] = _ii(plan, graph, target)
    weight = cost_table(graph, target).params.ii_weight
    row["ii_bound"] = None if row["bound"] is None else row["bound"] // weight
    row["base_rss_mb"], row["peak_rss_mb"] = base, rss_mb()
    return row


def _ii(plan, graph, target) -> int | None:
    """The plan's modeled II; None when it is not a valid plan (an infeasible loop)."""
    from ws_solver.model.check import check_plan
    from ws_solver.model.cost import evaluate

    return None if check_plan(plan, graph, target) else evaluate(plan, graph, target).ii


def _solver_columns(details: dict) -> dict:
    status = details.get("status", "SKIPPED")
    proven = status == "OPTIMAL"
    return {
        "status": status,
        "gap": details.get("gap"),
        "bound": details.get("bound"),
        "heuristic_objective": details.get("heuristic_objective"),
        "solver_wall_s": details.get("solver_wall_s"),
        "first_solution_s": details.get("first_solution_s"),
        "first_solution_deterministic": details.get("first_solution_deterministic"),
        "deterministic_s": details.get("deterministic_s"),
        "proof_s": details.get("solver_wall_s") if proven else None,
        "proof_deterministic": details.get("deterministic_s") if proven else None,
    }


def measure_in_child(path: Path, args: argparse.Namespace) -> dict:
    """`measure` in a fresh interpreter (its own peak memory and caches)."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.cpu.bench_scale",
        "--measure",
        str(path),
        "--time-limit",
        str(args.time_limit),
        "--workers",
        str(args.workers),
        "--runs",
        str(args.runs),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{path.name}: measuring failed: {tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the report ---------------------------------------------------------------------------------
def _s(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _ii_proven(row: dict) -> str:
    """Marks a gap left only in the tie-break: the least II itself is proven."""
    proven = row["status"] == "FEASIBLE" and row["ii_bound"] == row["ii"]
    return " (II proven)" if proven else ""


def _gap(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def markdown(meta: dict, rows: list[dict]) -> str:
    """The committed table: one row per loop, then what the columns mean."""
    limit = meta["time_limit"]
    lines = [
        f"# Scale benchmark — {meta['date']}",
        "",
        f"- revision {meta['revision']}; {meta['machine']}",
        f"- time limit {limit:g} s, {meta['workers']} CP-SAT workers, seed 0; heuristic: "
        f"median of {meta['runs']} cold runs",
        f"- load average before / after: {meta['load_before']} / {meta['load_after']}",
        *([f"- {meta['note']}"] if meta.get("note") else []),
        "",
        "| target | loop | ops | heuristic: wall (CPU) | heuristic strategy "
        "| optimal strategy: wall (÷ limit), status, gap "
        f"| CP-SAT at {limit:g} deterministic s: status | gap | first solution | proof "
        "| peak RSS |",
        "|---|---|--:|--:|--:|--:|---|--:|--:|--:|--:|",
    ]
    for r in rows:
        first = "–" if r["first_solution_s"] is None else _both(r, "first_solution")
        proof = _both(r, "proof") if r["proof_s"] else "–"
        shipped = (
            f"{_s(r['optimal_wall_s'])} s ({r['optimal_wall_s'] / limit:.2f}), "
            f"{r['optimal_status'] or 'SKIPPED'}, {_gap(r['optimal_gap'])}"
        )
        lines.append(
            f"| {r['target']} | {r['file'].split('.')[1]} | {r['ops']} "
            f"| {_ms(r['heuristic_s'])} ({_ms(r['heuristic_cpu_s'])}) "
            f"| {_s(r['heuristic_wall_s'])} s | {shipped} "
            f"| {r['status']} | {_gap(r['gap'])}{_ii_proven(r)} | {first} | {proof} "
            f"| {r['peak_rss_mb']:.0f} MB |"
        )
    base = min(r["base_rss_mb"] for r in rows)
    lines += [
        "",
        "Columns: `heuristic` is `decide` alone, wall time (CPU time of the process in",
        "brackets: what it costs on an idle core). `heuristic strategy` and `optimal strategy`",
        "are `plan_loop` as `ws-solver partition` runs it, the limit bounding its wall clock:",
        "its wall time (over the limit), the solver's status and gap. `CP-SAT at ... "
        "deterministic s` is",
        "the optimal strategy again with the limit on CP-SAT's deterministic time only (the",
        'same on every machine): its status, gap `(objective − bound) / objective` ("II',
        'proven": the least II is, only the tie-break is not), and when it found its first',
        "plan and proved the optimum, in wall seconds since the solve began with deterministic",
        f"seconds in brackets. `peak RSS`: the process's peak memory (about {base:.0f} MB of",
        "it is the interpreter and its imports).",
        "",
        "Reasons per loop:",
        "",
    ]
    for r in rows:
        stopped = f", stopped by the {r['optimal_stopped_by']}" if r["optimal_stopped_by"] else ""
        lines.append(
            f"- {r['file']}: heuristic: {r['heuristic_reason']}; optimal: "
            f"{r['optimal_reason']}{stopped}"
        )
    return "\n".join(lines) + "\n"


def _both(row: dict, what: str) -> str:
    return f"{_s(row[f'{what}_s'])} s ({_s(row[f'{what}_deterministic'])})"


def plot(rows: list[dict], limit: float, path: Path) -> None:
    """Heuristic and strategy times against loop size, per target (log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, target in zip(axes, ("sm_90", "sm_100"), strict=True):
        mine = sorted((r for r in rows if r["target"] == target), key=lambda r: r["ops"])
        if not mine:
            ax.set_axis_off()
            continue
        ops = [r["ops"] for r in mine]
        ax.plot(ops, [r["heuristic_s"] for r in mine], "o-", label="heuristic (wall)")
        ax.plot(ops, [r["heuristic_cpu_s"] for r in mine], "o:", label="heuristic (CPU)")
        ax.plot(ops, [r["optimal_wall_s"] for r in mine], "s-", label="optimal strategy (wall)")
        proven = [r for r in mine if r["proof_s"]]
        proof = [max(r["proof_deterministic"], 1e-3) for r in proven]  # log scale
        ax.plot([r["ops"] for r in proven], proof, "k*", label="proof (deterministic s)")
        ax.axhline(limit, color="grey", linestyle="--", linewidth=1, label="time limit")
        ax.set(xscale="log", yscale="log", title=target, xlabel="ops in the loop")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="heuristic runs per loop")
    parser.add_argument(
        "--only", action="append", help="only loops whose file contains this (repeatable)"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep-ttgir", type=Path, default=None, help="keep the dumps here")
    parser.add_argument("--note", default="", help="a line for the report (e.g. the load)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.time_limit, args.workers, args.runs)))
        return 0

    from benchmarks.common import archive
    from benchmarks.cpu.bench_solver import git_revision

    date = datetime.date.today().isoformat()
    out = args.out or ROOT / "benchmarks" / "results" / f"{date}-scale"
    instances = [i for i in INSTANCES if not args.only or any(s in i.file for s in args.only)]
    meta = {
        "date": date,
        "revision": git_revision(),
        "machine": machine(),
        "time_limit": args.time_limit,
        "workers": args.workers,
        "runs": args.runs,
        "note": args.note,
        "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    rows = []
    with tempfile.TemporaryDirectory(prefix="ws_scale_") as tmp:
        folder = args.keep_ttgir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for path in generate(instances, folder):
            row = measure_in_child(path, args)
            print(
                f"{row['target']:>6} {row['ops']:>5} ops: heuristic {row['heuristic_s']:.3f} s,"
                f" optimal {row['optimal_wall_s']:.1f} s {row['optimal_status']};"
                f" deterministic: {row['status']} gap {_gap(row['gap'])}",
                file=sys.stderr,
            )
            rows.append(row)
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows.sort(key=lambda r: (r["target"], r["ops"]))
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / "scale.md").write_text(markdown(meta, rows))
    plot(rows, args.time_limit, out / "scale.png")
    archive.write_manifest(
        out,
        what="heuristic and CP-SAT time, gap and memory on unrolled attention loops",
        command="python -m benchmarks.cpu.bench_scale " + shlex.join(argv or sys.argv[1:]),
        revision=meta["revision"],
        date=date,
    )
    print(out / "scale.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

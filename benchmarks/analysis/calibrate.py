"""Calibrate the cost model on GPU measurements: rank correlation, decisions, fitted constants.

    python -m benchmarks.analysis.calibrate [RESULTS.json ...] [--json OUT] [--corpus DIR]
                                   [--triton-version V] [--ptxas V]

Reads results JSONs written by benchmarks/gpu/bench_kernels.py (default: every results JSON a
run folder of benchmarks/results lists in its manifest that recorded the plans it measured,
compile.dropin.loops[].plan, measured under the Triton release --triton-version names:
3.6.0 by default, the release CostParams were fitted for; a run that does not record its
release is a 3.6.0 one),
rebuilds each measured plan and the graph of its loop from the corpus TTGIR
(corpus/ttgir/KERNEL.CONFIG.smXX.ttgir; corpus/ttgir-3.9 for a Triton 3.9.0 run), and
evaluates the plan under the current cost model and the lowering rules of the run's release.
A run's modeled II is the sum over the kernel's loops.

Prints, per kernel:

- Spearman rank correlation of modeled II vs measured ms, within each configuration (the plans
  of its strategies: none, heuristic, optimal, forced) and across the kernel's configurations;
- the decision check: in each configuration whose 'forced' run specialized, does the model
  prefer (lower modeled II among the plans that pass check_plan; a tie keeps one partition,
  as the heuristic's `decide` does) the variant that measured faster, unspecialized ('none')
  or specialized ('forced')? Configurations whose forced run did not specialize offer no
  choice and are listed apart.

Then the constants of the cost model it fits from the data (CostParams,
ws_solver/model/cost_params.py); the code's values must be what it prints (each line says
"same in code" or the code's value):

- register_scale_percent: the least percent at which base_registers + the scaled tensor
  registers per thread cover ptxas's count on every unspecialized run that did not spill;
- the stalls (cycles per iteration added to II, `cost.stalls`), in this order:
  wgmma_shared_stall_cycles, wgmma_lone_stall_cycles, lost_occupancy_cycles. A stall is
  estimated on each configuration whose two variants differ in it and in no stall after it:
  the cycles that make the ratio of their modeled IIs (stalls fitted before it included)
  equal the ratio of their measured times. The constant is the median, rounded to a cycle.

Runs that spilled registers are left out of the fits: spilling is what the register limits
prevent, not something a stall models. Identical plans measured under several strategies
count once, at their fastest time (timing noise only slows a run down). Explored
configurations (`x_NAME`, bench_kernels.py --extra-configs) are found under NAME once their
TTGIR is in a corpus folder; runs without TTGIR are skipped and listed. Exit status 0, or 1
when no results file has recorded plans.

To recalibrate after a GPU run: run this script, copy the printed constants into CostParams,
run it again (every line should say "same in code") and the tests.

--json OUT writes the whole report as JSON (written to a temporary file, then renamed).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import ceil, inf
from pathlib import Path

from benchmarks.common import archive
from benchmarks.common.stats import spearman
from corpus import ttgir_dir
from ws_solver import ir
from ws_solver.heuristic import decide
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate, stalls
from ws_solver.model.cost_params import PARAMS, CostParams
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import LoopGraph
from ws_solver.model.lowering_facts import DEFAULT_TRITON, release_of
from ws_solver.model.plan import Plan
from ws_solver.model.resources import register_bytes
from ws_solver.model.target import Target, target_for
from ws_solver.triton.toolchain import versions

ROOT = Path(__file__).resolve().parents[2]

CORPUS = ROOT / "corpus" / "ttgir"
# TTGIR of corpus kernels as they were when earlier results were measured (searched after
# CORPUS: a run's plans are matched to the first TTGIR whose loops they fit).
ARCHIVES = (archive.RESULTS / "2026-11-29-ttgir-attention",)
CORPORA = (CORPUS, *ARCHIVES)


@dataclass(frozen=True)
class Run:
    """One measured kernel run whose every loop has a recorded plan."""

    source: str  # results file (`source_name`)
    kernel: str
    config: str
    strategy: str
    ms: float
    n_regs: int | None
    n_spills: int | None
    plans: tuple[Plan, ...]
    graphs: tuple[LoopGraph, ...]
    target: Target

    @property
    def specialized(self) -> bool:
        return any(p.specialized for p in self.plans)

    @property
    def spilled(self) -> bool:
        return bool(self.n_spills)

    @property
    def plan_key(self) -> tuple:
        """What makes two runs the same plan (the strategy that chose it does not)."""
        return tuple((p.assignment, p.partitions, p.channels) for p in self.plans)


# -- loading ---------------------------------------------------------------------------------
def default_sources(
    results: Path = archive.RESULTS, triton: str = "3.6.0", ptxas: str | None = None
) -> list[Path]:
    """The GPU results files of the archive's runs measured under Triton ``triton`` (and,
    when given, assembled by ptxas ``ptxas``) that recorded at least one measured plan."""
    found = []
    for folder in archive.runs(results):
        for path in archive.listed_files(folder):
            if path.suffix != ".json":
                continue
            data = _load(path)
            if run_triton(data) != triton or not any(_planned_rows(data)):
                continue
            if ptxas is None or run_ptxas(data) == ptxas:
                found.append(path)
    return found


def run_triton(data: dict | list) -> str:
    """The Triton release a bench run recorded (3.6.0 for runs from before it did)."""
    env = data.get("environment") if isinstance(data, dict) else None
    return release_of((env or {}).get("triton") or DEFAULT_TRITON)


def run_ptxas(data: dict | list) -> str | None:
    """The ptxas release a bench run recorded assembling with (None before runs recorded it)."""
    env = data.get("environment") if isinstance(data, dict) else None
    return ((env or {}).get("ptxas") or {}).get("version")


def default_corpora(triton: str) -> tuple[Path, ...]:
    """Where a release's runs find their TTGIR: its corpus dump (and, for 3.6.0, the
    archived TTGIR of the 2026-11-29 runs)."""
    own = ttgir_dir(triton)
    return CORPORA if own == CORPUS else (own,)


def source_name(path: Path) -> str:
    """How reports name a results file: its run folder and name for a run's results.json."""
    return f"{path.parent.name}/{path.name}" if path.name == "results.json" else path.name


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _planned_rows(data: dict | list):
    if not isinstance(data, dict):  # not a bench run's results (e.g. lowering_probe's list)
        return
    for row in data.get("results", []):
        loops = ((row.get("compile") or {}).get("dropin") or {}).get("loops") or []
        ms = (row.get("bench") or {}).get("ms")
        if loops and ms and all(loop.get("plan") for loop in loops):
            yield row, loops


def ttgir_paths(corpora: tuple[Path, ...], kernel: str, config: str, capability: int):
    """The TTGIR files that may be a measured configuration's, in search order. Explored
    configurations (`x_NAME`, bench_kernels.py --extra-configs) are found under NAME once
    added to a corpus."""
    for corpus in corpora:
        for name in dict.fromkeys((config, config.removeprefix("x_"))):
            path = corpus / f"{kernel}.{name}.sm{capability}.ttgir"
            if path.exists():
                yield path


def _fits(plans: tuple[Plan, ...], loops: list[dict], graphs: tuple[LoopGraph, ...]) -> bool:
    if any(loop["loop"] >= len(graphs) for loop in loops):
        return False
    mine = (graphs[loop["loop"]] for loop in loops)
    return all(
        p.loop == g.name and len(p.assignment) == len(g.nodes)
        for p, g in zip(plans, mine, strict=True)
    )


@cache
def _graphs(path: Path) -> tuple[LoopGraph, ...]:
    return tuple(build_graphs(ir.parse(path.read_text())))


def load_runs(paths: list[Path], corpora: tuple[Path, ...] = CORPORA):
    """Every run with recorded plans, its plans and loop graphs rebuilt; and the names of the
    configurations skipped for want of their TTGIR."""
    runs, skipped = [], set()
    for path in paths:
        data = _load(path)
        for row, loops in _planned_rows(data):
            plans = tuple(Plan.from_dict(loop["plan"]) for loop in loops)
            target = target_for(plans[0].target, triton=run_triton(data))
            candidates = list(ttgir_paths(corpora, row["kernel"], row["config"], target.capability))
            if not candidates:
                skipped.add(f"{row['kernel']}.{row['config']}")
                continue
            ttgir = next((c for c in candidates if _fits(plans, loops, _graphs(c))), None)
            if ttgir is None:
                tried = ", ".join(str(c.relative_to(ROOT)) for c in candidates)
                raise ValueError(f"{path.name}: {row['job']}: its plans fit none of {tried}")
            graphs = _graphs(ttgir)
            mine = tuple(graphs[loop["loop"]] for loop in loops)
            comp = row["compile"]
            runs.append(
                Run(
                    source=source_name(path),
                    kernel=row["kernel"],
                    config=row["config"],
                    strategy=row["strategy"],
                    ms=float(row["bench"]["ms"]),
                    n_regs=comp.get("n_regs"),
                    n_spills=comp.get("n_spills"),
                    plans=plans,
                    graphs=mine,
                    target=target,
                )
            )
    return runs, sorted(skipped)


# -- the model on a run ----------------------------------------------------------------------
def modeled_ii(run: Run, params: CostParams = PARAMS) -> int:
    pairs = zip(run.plans, run.graphs, strict=True)
    return sum(evaluate(p, g, run.target, params).ii for p, g in pairs)


def is_valid(run: Run) -> bool:
    return not any(check_plan(p, g, run.target) for p, g in zip(run.plans, run.graphs, strict=True))


def heuristic_specializes(run: Run) -> bool:
    """Whether the heuristic (`decide`, under the current model) specializes any loop."""
    return any(decide(g, run.target)[0].specialized for g in run.graphs)


def correlations(runs: list[Run]) -> dict[str, dict]:
    """Per kernel: Spearman within each configuration, and across its configurations. A plan
    that fails check_plan ranks as modeled infinitely slow (the model rejects it)."""
    out: dict[str, dict] = {}
    for kernel in sorted({r.kernel for r in runs}):
        mine = [r for r in runs if r.kernel == kernel]
        points = {id(r): (modeled_ii(r) if is_valid(r) else inf, r.ms) for r in mine}
        configs = {}
        for config in sorted({r.config for r in mine}):
            pts = [points[id(r)] for r in mine if r.config == config]
            configs[config] = {"points": len(pts), "spearman": _rho(pts)}
        pts = list(points.values())
        out[kernel] = {"points": len(pts), "spearman": _rho(pts), "configs": configs}
    return out


def _rho(points: list[tuple[float, float]]) -> float | None:
    return spearman([p[0] for p in points], [p[1] for p in points])


@dataclass(frozen=True)
class Variant:
    """The fastest run of one distinct plan of a configuration."""

    run: Run
    ii: int
    valid: bool


def variants(runs: list[Run]) -> dict[tuple[str, str], dict[str, Variant]]:
    """Per (kernel, config): the 'none' and 'forced' plans, each at its fastest run."""
    out: dict[tuple[str, str], dict[str, Variant]] = {}
    for key in sorted({(r.kernel, r.config) for r in runs}):
        mine = [r for r in runs if (r.kernel, r.config) == key]
        chosen = {}
        for strategy in ("none", "forced"):
            first = next((r for r in mine if r.strategy == strategy), None)
            if first is None:
                continue
            same = [r for r in mine if r.plan_key == first.plan_key]
            fastest = min(same, key=lambda r: r.ms)
            chosen[strategy] = Variant(fastest, modeled_ii(fastest), is_valid(fastest))
        out[key] = chosen
    return out


def decisions(runs: list[Run]) -> list[dict]:
    """The decision check, one entry per configuration with both variants measured."""
    out = []
    for (kernel, config), found in variants(runs).items():
        if set(found) != {"none", "forced"}:
            continue
        none, forced = found["none"], found["forced"]
        entry = {
            "kernel": kernel,
            "config": config,
            "none_ms": round(none.run.ms, 4),
            "forced_ms": round(forced.run.ms, 4),
            "none_ii": none.ii,
            "forced_ii": forced.ii,
            "forced_valid": forced.valid,
            "spilled": none.run.spilled or forced.run.spilled,
        }
        if not forced.run.specialized:
            entry["choice"] = False
            out.append(entry)
            continue
        model = "forced" if forced.valid and forced.ii < none.ii else "none"
        measured = "forced" if forced.run.ms < none.run.ms else "none"
        heuristic = "forced" if heuristic_specializes(none.run) else "none"
        entry.update(choice=True, model=model, measured=measured, agree=model == measured)
        entry.update(heuristic=heuristic, heuristic_agrees=heuristic == measured)
        out.append(entry)
    return out


# -- fitting the constants -------------------------------------------------------------------
# Fitted in this order: each stall is estimated where it is the last unknown that differs.
STALLS = ("wgmma_shared_stall_cycles", "wgmma_lone_stall_cycles", "lost_occupancy_cycles")


def fit_register_scale(runs: list[Run], params: CostParams = PARAMS) -> tuple[int, dict]:
    """The least register_scale_percent covering ptxas on every unspecialized run that did not
    spill, and per configuration the percent it alone needs."""
    need: dict[str, Fraction] = {}
    for run in runs:
        if run.specialized or run.spilled or not run.n_regs:
            continue
        per_thread = max(
            Fraction(
                register_bytes(cost_table(g, run.target, params), range(len(g.nodes))),
                4 * run.target.threads_per_warp * g.num_warps,
            )
            for g in run.graphs
        )
        percent = 100 * (run.n_regs - params.base_registers) / per_thread
        key = f"{run.kernel}.{run.config}"
        need[key] = max(need.get(key, percent), percent)
    return ceil(max(need.values(), default=100)), {k: float(v) for k, v in sorted(need.items())}


def stall_counts(run: Run, params: CostParams) -> dict[str, int]:
    """Per stall constant: how many of the run's loops pay it."""
    counts = dict.fromkeys(STALLS, 0)
    for plan, graph in zip(run.plans, run.graphs, strict=True):
        for name, on in stalls(plan, cost_table(graph, run.target, params)).items():
            counts[name] += on
    return counts


def fit_stalls(runs: list[Run], params: CostParams) -> tuple[dict[str, int], dict]:
    """Each stall in STALLS order: per configuration whose two variants (none, forced; neither
    spilled) differ in that stall and in none fitted after it, the cycles that make the ratio
    of their modeled IIs (stalls fitted before it included, others left out) equal the ratio
    of their measured times; the constant is the median, rounded to a cycle."""
    unstalled = dataclasses.replace(params, **dict.fromkeys(STALLS, 0))
    pairs = {}
    for (kernel, config), found in variants(runs).items():
        none, forced = found.get("none"), found.get("forced")
        spilled = none and forced and (none.run.spilled or forced.run.spilled)
        if none and forced and forced.run.specialized and not spilled:
            pairs[f"{kernel}.{config}"] = (none.run, forced.run)
    fitted: dict[str, int] = {}
    estimates: dict[str, dict[str, float]] = {}
    for i, name in enumerate(STALLS):
        estimates[name] = {}
        for key, (none, forced) in pairs.items():
            cu, cs = stall_counts(none, params), stall_counts(forced, params)
            if cu[name] == cs[name] or any(cu[k] != cs[k] for k in STALLS[i + 1 :]):
                continue
            ratio = none.ms / forced.ms
            known_u = modeled_ii(none, unstalled) + sum(v * cu[k] for k, v in fitted.items())
            known_s = modeled_ii(forced, unstalled) + sum(v * cs[k] for k, v in fitted.items())
            estimate = (ratio * known_s - known_u) / (cu[name] - ratio * cs[name])
            estimates[name][key] = round(estimate, 1)
        fitted[name] = round(statistics.median(estimates[name].values() or [0]))
    return fitted, estimates


def fit(runs: list[Run]) -> dict:
    """The fitted constants, their per-configuration estimates and the code's values."""
    scale, scale_needs = fit_register_scale(runs)
    params = dataclasses.replace(PARAMS, register_scale_percent=scale)
    fitted, estimates = fit_stalls(runs, params)
    fitted = {"register_scale_percent": scale, **fitted}
    return {
        "fitted": fitted,
        "in_code": {k: getattr(PARAMS, k) for k in fitted},
        "estimates": {"register_scale_percent": scale_needs, **estimates},
    }


# -- report ----------------------------------------------------------------------------------
def build_report(paths: list[Path], corpora: tuple[Path, ...] = CORPORA) -> dict:
    runs, skipped = load_runs(paths, corpora)
    checks = decisions(runs)
    decided = [c for c in checks if c["choice"]]
    return {
        "sources": [source_name(p) for p in paths],
        "runs": len(runs),
        "skipped": skipped,
        "correlations": correlations(runs),
        "decisions": checks,
        "agree": sum(c["agree"] for c in decided),
        "heuristic_agrees": sum(c["heuristic_agrees"] for c in decided),
        "decided": len(decided),
        "constants": fit(runs),
    }


def _fmt(rho: float | None) -> str:
    return "  n/a" if rho is None else f"{rho:+.2f}"


def format_report(report: dict) -> str:
    lines = [f"calibration on {', '.join(report['sources'])}: {report['runs']} runs with plans"]
    lines.append("")
    lines.append("Spearman (modeled II vs measured ms), per kernel: across configs | per config")
    for kernel, c in report["correlations"].items():
        per = "  ".join(f"{cfg} {_fmt(v['spearman'])}" for cfg, v in c["configs"].items())
        lines.append(f"  {kernel:16} {_fmt(c['spearman'])} ({c['points']:2} runs) | {per}")
    lines.append("")
    lines.append(
        f"decision check: the model prefers the measured-faster variant in "
        f"{report['agree']} of {report['decided']} configurations; the heuristic's own plan "
        f"(decide) specializes exactly where that variant is the specialized one in "
        f"{report['heuristic_agrees']} of them"
    )
    for c in report["decisions"]:
        name = f"{c['kernel']}.{c['config']}"
        times = f"none {c['none_ms']:.3f} ms (II {c['none_ii']}) vs forced {c['forced_ms']:.3f}"
        times += f" ms (II {c['forced_ii']}{'' if c['forced_valid'] else ', invalid'})"
        spill = ", spills" if c["spilled"] else ""
        if not c["choice"]:
            lines.append(f"  {'-':5} {name:44} forced did not specialize{spill}")
            continue
        mark = "ok" if c["agree"] else "WRONG"
        lines.append(
            f"  {mark:5} {name:44} measured {c['measured']:6} model {c['model']:6} "
            f"decide {c['heuristic']:6} {times}{spill}"
        )
    lines.append("")
    lines.append("constants fitted from these runs (CostParams in ws_solver/model/cost_params.py):")
    constants = report["constants"]
    for name, value in constants["fitted"].items():
        code = constants["in_code"][name]
        same = "same in code" if code == value else f"IN CODE: {code}"
        per = ", ".join(f"{k} {v:g}" for k, v in constants["estimates"][name].items())
        lines.append(f"  {name} = {value}  ({same})")
        lines.append(f"      from: {per or 'no configuration'}")
    if report["skipped"]:
        lines.append("")
        lines.append(f"skipped (no TTGIR in the corpus): {', '.join(report['skipped'])}")
    return "\n".join(lines)


def write_json(path: Path, payload: dict) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "results",
        nargs="*",
        type=Path,
        help="results JSONs (default: those of the archive's runs with recorded plans)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the report here")
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="folder of TTGIR files, searched in order (repeatable; default: corpus/ttgir, "
        "then the archived TTGIR in benchmarks/results/2026-11-29-ttgir-attention; "
        "corpus/ttgir-3.9 with --triton-version 3.9.0)",
    )
    parser.add_argument(
        "--triton-version",
        choices=list(versions.SUPPORTED),
        default="3.6.0",
        help="calibrate on the archive's runs measured under this Triton release (default "
        "3.6.0, the release CostParams were fitted for)",
    )
    parser.add_argument(
        "--ptxas",
        metavar="V",
        help="only the runs that recorded assembling with this ptxas release (e.g. 13.4, what "
        "Triton 3.9 uses for sm_90); runs from before the bench recorded it are left out",
    )
    args = parser.parse_args(argv)
    paths = args.results or default_sources(triton=args.triton_version, ptxas=args.ptxas)
    if args.results and args.ptxas:
        paths = [p for p in paths if run_ptxas(_load(p)) == args.ptxas]
    if not paths:
        made_by = f" assembled by ptxas {args.ptxas}" if args.ptxas else ""
        print(f"no results file with recorded plans{made_by}", file=sys.stderr)
        return 1
    report = build_report(paths, tuple(args.corpus or default_corpora(args.triton_version)))
    print(format_report(report))
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

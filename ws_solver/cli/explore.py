"""`ws-solver explore`: each warp-specialized loop's best plans under the cost model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.options import SURVEY_TIME_LIMIT
from ..core.strategy import MAX_PLANS
from ..core.wording import count
from ..pipeline.exploration import LoopFailed, annotate_rank, document, explore_module
from .backend_options import BACKEND_HELP, add_backend_arguments, backend_from_args, shipped
from .common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    CliError,
    add_file_command,
    add_planning_arguments,
    check_folder,
    exit_status_epilog,
    planning_input,
    positive_int,
    read_module,
    report,
    report_plan_cache,
    write_output,
)

HELP = "list each warp-specialized loop's best plans under the cost model"
DESCRIPTION = """\
List, for every loop of IN marked tt.warp_specialize, up to K plans that Triton lowers (by
the lowering rules of --triton-version), best first under ws_solver's cost model: rank 0 is
the modeled optimum, rank 1 the best plan that places some op differently, and so on. Plans
are told apart by which partitions run each op that cannot be duplicated (partition ids up
to relabelling); each comes with the model's best warps, registers and channel depths for
it. Each round is an exact CP-SAT solve with the plans already listed cut out, so a plan
marked OPTIMAL is proven the best one not listed before it; the list is the same for the
same seed.

Strategy optimal builds rank 0 only when its modeled gain over the heuristic's plan exceeds
the model's measured error (6.6%), and one partition when specializing gains less than the
loop's floor; otherwise it keeps the heuristic's plan. Each loop's output says where the
heuristic's plan ranks (or which rank it ties in II) and which plan optimal builds.

The drop-in compiles rank K as strategy "explore:K" (ws_solver.triton.enable("explore:2")),
and benchmarks/gpu/sweep_plans.py compiles, verifies and times every rank on a GPU, crossed with
the drop-in's other knobs (listed under "knobs" in the JSON).

Output: one line per plan on stdout (rank, status, modeled II, partitions with warps and
registers); --json writes the full report (schema: docs/json-schemas.md of the source
repository); --out-dir writes IN's TTGIR annotated with rank K of every loop as
STEM.explore-K.ttgir, for K = 0 .. N-1 (a loop with fewer plans keeps its rank 0)."""

EPILOG = f"""\
examples:
  ws-solver explore "$(ws-solver corpus)/gemm_tma.t128x256x64_w8_s3.sm90.ttgir" --k 4
  ws-solver explore "$(ws-solver corpus)/attention_fwd.d64_m128n64_w4_s3.sm100.ttgir" \\
      --k 6 --json plans.json --out-dir .
  ws-solver explore "$(ws-solver corpus)/attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir" \\
      --jobs 2 --backend ray

{BACKEND_HELP}

{exit_status_epilog(EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERNAL)}"""


def plans_per_loop(text: str) -> int:
    """argparse type of --k: 1 to MAX_PLANS."""
    value = positive_int(text)
    if value > MAX_PLANS:
        raise argparse.ArgumentTypeError(f"at most {MAX_PLANS} plans per loop, got {value}")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = add_file_command(subparsers, "explore", HELP, DESCRIPTION, EPILOG)
    parser.add_argument(
        "--k",
        type=plans_per_loop,
        default=4,
        metavar="N",
        help=f"plans per loop (default: 4, at most {MAX_PLANS})",
    )
    add_planning_arguments(
        parser,
        time_limit=SURVEY_TIME_LIMIT,
        cache=False,
        strategy=False,
        clock_help="CP-SAT's deterministic time per plan found (the same on every machine)",
    )
    add_backend_arguments(parser, "loops")
    parser.add_argument("--json", metavar="R.json", help="write the JSON report to R")
    parser.add_argument(
        "--out-dir", metavar="DIR", help="write IN annotated with each rank to DIR (must exist)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    if args.out_dir is not None:  # before any solving, as --json is
        names = [f"{Path(args.input).stem}.explore-{rank}.ttgir" for rank in range(args.k)]
        check_folder(args.out_dir, names)
    given = planning_input(args, [args.json], wall_clock=False)
    path, options = given.path, given.options
    try:
        with backend_from_args(args, ship=shipped()) as backend:
            loops = explore_module(
                given.module, args.k, args.target, options, backend, args.retries, given.triton
            )
    except ValueError as e:
        raise CliError(f"{path}: {e}", EXIT_BAD_INPUT) from e
    except LoopFailed as e:
        raise CliError(f"{path}: {e}", EXIT_INTERNAL) from e
    doc = document(str(path), args.k, options, loops)
    if args.json:
        write_output(json.dumps(doc, indent=1, sort_keys=True) + "\n", args.json)
    if args.out_dir is not None:
        deepest = max(len(loop.plans) for loop in loops)
        for rank in range(deepest):
            module = read_module(path)  # a fresh copy per rank
            annotate_rank(module, loops, rank)
            write_output(
                module.print(), str(Path(args.out_dir) / f"{path.stem}.explore-{rank}.ttgir")
            )
    write_output("".join(plan_lines(str(path), loop) + "\n" for loop in doc["loops"]), None)
    if args.out_dir is not None:
        report(f"wrote {count(deepest, 'annotated file')} to {args.out_dir}")
    report_plan_cache(options)
    return EXIT_OK


OPTIMAL_BUILDS = {
    "optimum": "the modeled optimum",
    "heuristic": "the heuristic's plan",
    "unspecialized": "one partition",
}


def _where(rank: int | None, tied_with: int | None) -> str:
    if rank is not None:
        return f"rank {rank}"
    if tied_with is not None:
        return f"not listed, tied with rank {tied_with} in II"
    return "not among them"


def plan_lines(file: str, loop: dict) -> str:
    h = loop["heuristic"]
    where = _where(h["rank"], h.get("tied_with"))
    lines = [
        f"{file}:{loop['line']}: {loop['kernel']} loop {loop['loop']} ({loop['target']}, "
        f"{count(loop['ops'], 'op')}): {count(len(loop['plans']), 'plan')}; the heuristic's "
        f"plan (II {h['ii']}) is {where}"
    ]
    for p in loop["plans"]:
        parts = ", ".join(
            f"p{q['id']} {q['role']} {q['warps']}w/{q['registers']}r/{count(q['ops'], 'op')}"
            for q in p["partitions"]
        )
        lines.append(
            f"  explore:{p['rank']:<2} {p['status']:<8} II {p['ii']:<6} "
            f"{count(len(p['partitions']), 'partition')}: {parts}; "
            f"{count(p['channels'], 'channel')}"
        )
    chosen = loop.get("optimal")
    if chosen:
        builds = OPTIMAL_BUILDS[chosen["plan"]]
        lines.append(
            f"  strategy optimal builds {builds}, {_where(chosen['rank'], chosen['tied_with'])} "
            f"({chosen['reason']})"
        )
    return "\n".join(lines)

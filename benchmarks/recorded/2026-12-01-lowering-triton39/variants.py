"""Follow-up probes of the 3.9 run: a plan with its partition ids permuted, or one node moved.

    PYTHONPATH=. python benchmarks/recorded/2026-12-01-lowering-triton39/variants.py \\
        FILE SOURCE CHANGE [CHANGE...]

FILE: a file of the installed version's corpus; SOURCE: a plan source of lowering_probe
(triton, heuristic, optimal, force) or ``pairN`` (minimal pair N as given); CHANGE:
``a,b,c`` (the plan's partition i gets id a, b, c; ``/`` separates WS loops),
``move:LOOP:NODE:TO`` (one node moved, as in ``--moves``), ``as-is`` or ``no-hopper`` (as is,
without the Hopper fix). One line per variant: the reference checker's rules and the
lowering verdict (the probe's guard, Hopper fix on sm_90 unless ``no-hopper``).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from benchmarks.cpu import lowering_probe as probe
from corpus import ttgir_dir
from ws_solver import ir
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.plan import Plan
from ws_solver.pipeline.partition import SolveOptions
from ws_solver.triton.guard.client import LoweringGuard


def source_plans(text: str, source: str) -> list:
    if not source.startswith("pair"):
        options = SolveOptions(time_limit=10, workers=1)
        return probe.base_plans(text, (source,), options)[source]
    where = probe.resolved_pairs()[int(source[4:])][2]
    module = ir.parse(text)
    graphs = [build_graph(module, loop) for loop in ws_loops(module)]
    specs = where.pair["loops"]
    return [(g, probe.plan_from_spec(g, s)) for g, s in zip(graphs, specs, strict=True)]


def permuted(plan: Plan, ids: list[int]) -> Plan:
    assignment = tuple(tuple(sorted(ids[q] for q in parts)) for parts in plan.assignment)
    partitions = sorted((replace(q, id=ids[q.id]) for q in plan.partitions), key=lambda q: q.id)
    return Plan(plan.loop, plan.target, assignment, tuple(partitions), (), plan.strategy)


def changed(plans: list, change: str) -> list:
    out = list(plans)
    if change.startswith("move:"):
        _, loop, node, to = change.split(":")
        graph, plan = out[int(loop)]
        out[int(loop)] = (graph, probe.moved(graph, plan, int(node), int(to)))
    elif change not in ("as-is", "no-hopper"):
        for index, spec in enumerate(change.split("/")):
            graph, plan = out[index]
            if spec and plan is not None and plan.specialized:
                out[index] = (graph, permuted(plan, [int(x) for x in spec.split(",")]))
    return out


def main(name: str, source: str, changes: list[str]) -> None:
    text = (ttgir_dir() / name).read_text()
    cap = probe.file_options(name)[0]
    plans = source_plans(text, source)
    guard = LoweringGuard()
    try:
        for change in changes:
            loop_plans = changed(plans, change)
            sizes = [len(p.partitions) if p else -1 for _, p in loop_plans]
            variant = probe.Variant(name, change, source, probe.annotate(text, loop_plans), sizes)
            variant.rules = probe._rules(loop_plans, cap)
            variant.hopper = change != "no-hopper"
            verdict = probe.probe(variant, 120, guard, None)
            print(
                f"{name} {source} {change}: rules {' '.join(variant.rules) or '-'}: "
                f"{probe.cell(verdict)} {verdict['error'][:160]}",
                flush=True,
            )
    finally:
        guard.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

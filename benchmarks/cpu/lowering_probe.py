"""Which partition plans the installed Triton's warp-specialization lowering accepts.

For every corpus file of the installed version (``corpus.ttgir_dir()``: ``corpus/ttgir`` for
3.6.0, ``corpus/ttgir-3.9`` for 3.9.0; sm_90 and sm_100) and every plan source —
Triton's own partitioner (``triton``), ws_solver's ``heuristic``, ``optimal`` (CP-SAT) and
the heuristic with ``force=True`` (``force``) — annotate the module and run Triton's lowering
(``run_after_partition``: warp_specialize, pipeline, optimize_partition_warps, the Hopper fix
on sm_90, the rest of make_ttgir) in a child process with a time limit, through the drop-in's
lowering guard (ws_solver/triton/guard/client.py). With ``--moves``, also every single-move
perturbation of the specialized ws_solver plans: one node moved to another partition of the
same plan (the rest of the plan unchanged; region ops, terminators and reduce bodies follow).

Prints one table row per (file, plan): ok, FAILED(pass), HANG(pass) or CRASH(pass), and the
lowering rules of docs/triton-lowering-rules.md that the plan breaks (``rule_violations``);
with ``--moves`` a summary per (file, plan), a rule-versus-verdict table, and, with
``--json``, every probe's details (moved node, verdict, failing pass, MLIR error, rules).

``--pairs`` lowers the minimal pairs of ``benchmarks/cpu/lowering_pairs.json`` instead: for each
rule, a plan (given node by node) and the same plan with one change (one node moved, or two
partition ids swapped), with the verdict of each. These plans are spelled out, so they do not
change when the heuristic or the model does. A pair probed on another Triton version is
lowered on the installed version's file of the same name when its loop graph is the same
(``benchmarks/cpu/pair_mapping.py``), and skipped otherwise, with the reason.

    python -m benchmarks.cpu.lowering_probe                 # base plans
    python -m benchmarks.cpu.lowering_probe --pairs         # the minimal pairs
    python -m benchmarks.cpu.lowering_probe --moves --json /tmp/probe.json
    python -m benchmarks.cpu.lowering_probe --files 'attention_fwd.d128*sm90*' \\
        --plans optimal --moves --print-moves
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.cpu.pair_mapping import ResolvedPair, resolve
from corpus import ttgir_dir
from ws_solver import ir
from ws_solver.core.options import DEFAULT_TIME_LIMIT
from ws_solver.ir.annotate import annotate_loop, clear_loop
from ws_solver.model.annotation import loop_annotation
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.plan import (
    Partition,
    Plan,
    complete_assignment,
    is_assignable,
)
from ws_solver.model.target import target_for
from ws_solver.pipeline.partition import SolveOptions, plan_loop
from ws_solver.triton.toolchain.versions import installed

REPO_ROOT = Path(__file__).resolve().parents[2]

PAIRS = Path(__file__).resolve().parent / "lowering_pairs.json"
PLANS = ("triton", "heuristic", "optimal", "force")
MOVED_PLANS = ("heuristic", "optimal", "force")  # the ws_solver plans that get perturbed
# Node kinds worth moving: the cheap scalar ones are duplicated by every plan anyway.
MOVABLE = {
    NodeKind.LOAD,
    NodeKind.STORE,
    NodeKind.MMA,
    NodeKind.TMEM,
    NodeKind.SFU,
    NodeKind.VIEW,
    NodeKind.REDUCE,
    NodeKind.NONE,
}
_ERROR = re.compile(r"error:\s*(.+)")
_ASSERTION = re.compile(r"Assertion `(.+?)' failed")
_UNREACHABLE = re.compile(r"([^\n]*)\n[^\n]*UNREACHABLE executed at [^\n]*?([\w.]+:\d+)!")
_FAILED_PIPELINE = re.compile(r"Pipeline failed while executing \[(.*?)\]")
_PASS = re.compile(r"`(\w+)` on")


@dataclass
class Variant:
    """One annotated module to lower."""

    file: str
    plan: str  # "heuristic", "optimal~n7 tt.reduce 1>0", ...
    base: str  # the plan it derives from
    text: str
    partitions: list[int]  # per WS loop: partitions of its plan (0: not specialized)
    move: dict | None = None  # node, op, kind, loop, from, to
    verdict: dict = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)  # rule_violations of its plans
    hopper: bool = True  # apply the Hopper fix on sm_90


def file_options(name: str) -> tuple[int, int, int]:
    """(capability, num_warps, num_stages) of a corpus file, from the installed version's
    corpus index (index.json)."""
    index = json.loads((ttgir_dir() / "index.json").read_text())
    entry = next(e for e in index if e["file"] == name)
    cap = 90 if entry["target"] == "sm90" else 100
    return cap, entry["num_warps"], entry["num_stages"]


def base_plans(text: str, names: tuple[str, ...], options: SolveOptions) -> dict[str, list]:
    """Per plan source: one (graph, plan) per WS loop (plan None for "triton")."""
    from ws_solver.heuristic import partition

    module = ir.parse(text)
    target = target_for(str(module.ops[0].attr("ttg.target")), installed().name)
    graphs = [build_graph(module, loop) for loop in ws_loops(module)]
    plans: dict[str, list] = {}
    for name in names:
        if name == "triton":
            plans[name] = [(g, None) for g in graphs]
        elif name == "force":
            plans[name] = [(g, partition(g, target, force=True)) for g in graphs]
        else:
            plans[name] = [(g, plan_loop(g, target, name, options)[0]) for g in graphs]
    return plans


def annotate(text: str, loop_plans: list) -> str:
    """``text`` with each WS loop annotated by its plan (tag removed when not specialized)."""
    module = ir.parse(text)
    for loop, (graph, plan) in zip(ws_loops(module), loop_plans, strict=True):
        if plan is None:
            continue  # Triton's own partitioner decides
        if plan.specialized:
            annotate_loop(loop.op, loop_annotation(graph, plan, tag=loop.index))
        else:
            clear_loop(loop.op)
    return module.print()


def moved(graph, plan: Plan, node_id: int, to: int) -> Plan:
    """``plan`` with node ``node_id`` run in partition ``to`` only."""
    decided = {n.id: plan.assignment[n.id] for n in graph.nodes if is_assignable(graph, n.id)}
    decided[node_id] = (to,)
    assignment = complete_assignment(graph, decided)
    return Plan(plan.loop, plan.target, assignment, plan.partitions, (), plan.strategy + "~move")


def movable_nodes(graph, plan: Plan) -> list:
    return [
        n
        for n in graph.nodes
        if n.role == NodeRole.OP
        and n.kind in MOVABLE
        and is_assignable(graph, n.id)
        and len(plan.assignment[n.id]) == 1
    ]


def _rules(loop_plans: list, capability: int) -> list[str]:
    found = {r for graph, plan in loop_plans for r in rule_violations(graph, plan, capability)}
    return sorted(found, key=lambda r: int(r[1:]))


def variants_for(name: str, names: tuple[str, ...], moves: bool, options) -> list[Variant]:
    text = (ttgir_dir() / name).read_text()
    cap = file_options(name)[0]
    plans = base_plans(text, names, options)
    out = []
    for source, loop_plans in plans.items():
        sizes = [len(p.partitions) if p is not None else -1 for _, p in loop_plans]
        variant = Variant(name, source, source, annotate(text, loop_plans), sizes)
        variant.rules = _rules(loop_plans, cap)
        out.append(variant)
    if not moves:
        return out
    for source in (s for s in MOVED_PLANS if s in plans):
        loop_plans = plans[source]
        for index, (graph, plan) in enumerate(loop_plans):
            if plan is None or not plan.specialized:
                continue
            ids = [p.id for p in plan.partitions]
            for node in movable_nodes(graph, plan):
                (frm,) = plan.assignment[node.id]
                for to in ids:
                    if to == frm:
                        continue
                    changed = list(loop_plans)
                    changed[index] = (graph, moved(graph, plan, node.id, to))
                    label = f"{source}~L{index} n{node.id} {node.op_name} {frm}>{to}"
                    move = {
                        "loop": index,
                        "node": node.id,
                        "op": node.op_name,
                        "kind": node.kind.value,
                        "label": node.label,
                        "from": frm,
                        "to": to,
                    }
                    variant = Variant(
                        name,
                        label,
                        source,
                        annotate(text, changed),
                        [len(p.partitions) if p else -1 for _, p in changed],
                        move,
                    )
                    variant.rules = _rules(changed, cap)
                    out.append(variant)
    return out


# -- the rules of docs/triton-lowering-rules.md, as a check on a plan -------------------------
_REMATERIALIZED = ("tt.broadcast", "tt.expand_dims")  # PartitionScheduling clones these
_MEMDESC_VIEWS = ("ttg.memdesc_trans", "ttg.memdesc_reshape", "ttg.memdesc_subslice")
# Ops whose first operand is a tensor of pointers (R11).
_POINTER_OPERAND = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.addptr")
# Rules that every plan in the perturbation study that broke them failed; the others
# ("risky") failed often but not always.
STRICT_RULES = ("R1", "R3", "R4", "R5", "R7", "R8")


def _parts(plan: Plan, node_id: int) -> set[int]:
    return set(plan.assignment[node_id])


def _has_exact_consumer(graph, plan: Plan, node_id: int, part: int, seen: set) -> bool:
    """NVWSInsertAref's createArefGet: a (transitive, through memdesc-producing ops other
    than local_alloc) consumer runs in exactly {part}."""
    node = graph.nodes[node_id]
    views = [e for e in graph.out_edges(node_id) if e.value_kind == "memdesc" and not e.distance]
    if node.role == NodeRole.OP and views and node.op_name != "ttg.local_alloc":
        seen.add(node_id)
        return any(
            _has_exact_consumer(graph, plan, e.dst, part, seen) for e in views if e.dst not in seen
        )
    return _parts(plan, node_id) == {part}


def rule_violations(graph, plan: Plan | None, capability: int) -> list[str]:
    """The lowering rules (docs/triton-lowering-rules.md) that ``plan`` breaks on ``graph``."""
    if plan is None or not plan.specialized:
        return []
    found: set[str] = set()
    nodes = graph.nodes
    for e in graph.edges:
        src, dst = nodes[e.src], nodes[e.dst]
        producer, consumer = _parts(plan, e.src), _parts(plan, e.dst)
        if consumer <= producer or dst.role == NodeRole.TERMINATOR:
            continue
        # R3: Triton clones broadcast/expand_dims chains into their users' partitions, so the
        # value that really crosses is the chain's input.
        origin, cloned = src, False
        while (
            origin is not None and origin.role == NodeRole.OP and origin.op_name in _REMATERIALIZED
        ):
            cloned = True
            ins = [x for x in graph.in_edges(origin.id) if x.use and x.use[1] == 0]
            origin = nodes[ins[0].src] if ins else None
        if origin is not None and origin.op_name == "tt.load" and origin.elements > 0:
            found.add("R3")
        if not cloned and e.value_kind != "token":
            for part in consumer - producer:
                if not _has_exact_consumer(graph, plan, e.dst, part, set()):
                    found.add("R5")
        if e.value_kind == "memdesc" and src.role == NodeRole.OP and src.op_name in _MEMDESC_VIEWS:
            found.add("R8")
        if src.op_name == "tt.descriptor_load" and dst.op_name == "ttg.local_alloc":
            found.add("R6")  # the load's data crosses as registers, not as a TMA into the aref
        staged = (src.op_name == "ttg.convert_layout" and dst.op_name == "ttng.warp_group_dot") or (
            dst.op_name == "tt.descriptor_store" and e.value_kind == "tensor"
        )
        if staged or (e.value_kind == "tensor" and capability == 90):
            found.add("R9")  # widened on sm_90 after the H200 runs: no register tensor crosses
        pointer_use = dst.op_name in _POINTER_OPERAND and e.use is not None and e.use[1] == 0
        if e.value_kind == "tensor" and (src.op_name == "tt.addptr" or pointer_use):
            found.add("R11")
    for node in nodes:
        if node.role != NodeRole.OP or node.op_name != "ttng.warp_group_dot" or capability != 90:
            continue
        if _parts(plan, node.id) != {0}:
            found.add("R2")
            if any(b.memory == "shared" and not b.inside_loop for b in node.buffers):
                found.add("R1")
    if capability >= 100:
        found |= _tmem_violations(graph, plan)
    return sorted(found, key=lambda r: int(r[1:]))


def _tmem_violations(graph, plan: Plan) -> set[str]:
    found: set[str] = set()
    nodes = graph.nodes
    by_buffer: dict[str, list] = {}
    for node in nodes:
        if node.role == NodeRole.OP and node.kind in (NodeKind.MMA, NodeKind.TMEM):
            for b in node.buffers:
                if b.memory == "tensor":
                    by_buffer.setdefault(b.name, []).append(node)
    for ops in by_buffer.values():
        parts: set[int] = set()
        for node in ops:
            parts |= _parts(plan, node.id)
        names = {n.op_name for n in ops}
        if len(parts) == 1 and parts != {0} and "ttng.tmem_load" in names:
            found.add("R7")
        simt = set()
        for node in ops:
            if node.op_name in ("ttng.tmem_load", "ttng.tmem_store"):
                simt |= _parts(plan, node.id)
        accessors = {n.id for n in ops if n.op_name != "ttng.tmem_alloc"}
        if len(simt) > 1 or len(set().union(*(_parts(plan, n) for n in accessors))) > 2:
            found.add("R10")
        mmas = [n for n in ops if n.kind == NodeKind.MMA]
        inside_if = [
            n
            for n in ops
            if n.kind == NodeKind.TMEM
            and n.parent is not None
            and nodes[n.parent].op_name == "scf.if"
        ]
        if mmas and inside_if and _parts(plan, mmas[0].id) != _parts(plan, inside_if[0].id):
            body: set[int] = set()
            for child in nodes:
                if child.parent == inside_if[0].parent and child.role == NodeRole.OP:
                    body |= _parts(plan, child.id)
            if _parts(plan, mmas[0].id) != {1} or body != {0}:
                found.add("R4")
    return found


# -- minimal pairs (benchmarks/cpu/lowering_pairs.json) -------------------------------------------
def plan_from_spec(graph, spec: dict, change: list | None = None) -> Plan:
    """A plan given node by node: ``spec["assign"]`` maps node labels to partitions (others
    run in partition 0), ``spec["stages"]`` gives each partition's stage. ``change``:
    ``["move", label, partition]`` or ``["swap", a, b]`` (exchange two partition ids)."""
    assign = {k: tuple(v) for k, v in spec["assign"].items()}
    stages = list(spec["stages"])
    swap: dict[int, int] = {}
    if change and change[0] == "move":
        if not any(n.label == change[1] for n in graph.nodes):
            raise KeyError(f"{graph.name}: no node labelled {change[1]!r}")
        assign[change[1]] = (int(change[2]),)
    elif change and change[0] == "swap":
        a, b = int(change[1]), int(change[2])
        swap = {a: b, b: a}
        stages[a], stages[b] = stages[b], stages[a]
    decided = {
        n.id: tuple(sorted(swap.get(p, p) for p in assign.get(n.label, (0,))))
        for n in graph.nodes
        if is_assignable(graph, n.id)
    }
    partitions = tuple(Partition(i, graph.num_warps, 0, stage) for i, stage in enumerate(stages))
    assignment = complete_assignment(graph, decided)
    return Plan(graph.name, "", assignment, partitions, (), "pair")


def installed_version() -> str:
    """The installed Triton's release ("3.6.0"), as the version table names it."""
    from ws_solver.triton.toolchain.versions import installed

    return installed().name


def resolved_pairs(pairs_path: Path = PAIRS) -> list[tuple[int, dict, ResolvedPair | str]]:
    """Each minimal pair with where the installed Triton lowers it, or why it cannot."""
    pairs = json.loads(pairs_path.read_text())
    corpus, version = ttgir_dir(), installed_version()
    return [(index, pair, resolve(pair, corpus, version)) for index, pair in enumerate(pairs)]


def pair_variants(pairs_path: Path = PAIRS, resolved: list | None = None) -> list[Variant]:
    """Two variants per minimal pair that the installed Triton can lower: as given, and with
    its one change."""
    out = []
    for index, _, where in resolved or resolved_pairs(pairs_path):
        if isinstance(where, str):
            continue
        pair = where.pair
        text = where.path.read_text()
        module = ir.parse(text)
        graphs = [build_graph(module, loop) for loop in ws_loops(module)]
        cap = file_options(pair["file"])[0]
        for which, change in (("A", None), ("B", pair["change"])):
            loop_plans = []
            for loop_index, (graph, spec) in enumerate(zip(graphs, pair["loops"], strict=True)):
                loop_change = change if loop_index == pair.get("loop", 0) else None
                loop_plans.append((graph, plan_from_spec(graph, spec, loop_change)))
            label = f"pair {index} {pair['rule']} {which}" + (
                f": {' '.join(map(str, change))}" if change else f" ({pair['from']} plan)"
            )
            variant = Variant(
                pair["file"],
                label,
                pair["rule"],
                annotate(text, loop_plans),
                [len(p.partitions) for _, p in loop_plans],
                hopper=pair.get("hopper_fix", True),
            )
            variant.rules = sorted(
                {r for g, p in loop_plans for r in rule_violations(g, p, cap)},
                key=lambda r: int(r[1:]),
            )
            out.append(variant)
    return out


def probe(variant: Variant, timeout: float, guard, cache_dir: str | None) -> dict:
    from triton.backends.nvidia.compiler import CUDAOptions

    from ws_solver.triton.guard.client import LoweringJob
    from ws_solver.triton.rewrites import chain as rewrites

    cap, warps, stages = file_options(variant.file)
    job = LoweringJob(
        text=variant.text,
        capability=cap,
        options=CUDAOptions(num_warps=warps, num_stages=stages),
        num_warps=warps,
        registers=(),  # Triton's own register requests: the plan's do not change lowering
        apply_registers=False,
        hopper=variant.hopper and cap == 90 and rewrites.hopper_fix() is not None,
    )
    verdict = guard.probe(job, timeout, cache_dir=cache_dir)
    errors = [m.strip() for m in _ERROR.findall(verdict.stderr)]
    errors = [m for m in errors if "Failures have been detected" not in m]
    assertion = _ASSERTION.search(verdict.stderr)
    unreachable = _UNREACHABLE.search(verdict.stderr)
    if assertion:
        errors.insert(0, f"assertion: {assertion.group(1)}")
    elif unreachable:
        errors.insert(0, f"unreachable: {unreachable.group(1)} ({unreachable.group(2)})")
    failed = _FAILED_PIPELINE.search(verdict.stderr)
    passes = _PASS.findall(failed.group(1)) if failed else []
    return {
        "status": verdict.status,
        "stage": verdict.stage,
        "passes": passes,
        "error": errors[0][:300] if errors else verdict.message[:300],
        "reason": verdict.reason,
        "wall_s": round(verdict.wall_s, 3),
    }


def cell(verdict: dict) -> str:
    status = verdict["status"]
    if status == "ok":
        return "ok"
    where = verdict["passes"][-1] if verdict["passes"] else verdict["stage"]
    word = {"error": "FAILED", "hang": "HANG", "crash": "CRASH"}.get(status, status.upper())
    return f"{word}({where})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="*", help="glob over corpus/ttgir file names")
    ap.add_argument("--plans", default=",".join(PLANS), help=f"subset of {','.join(PLANS)}")
    ap.add_argument("--moves", action="store_true", help="also single-move perturbations")
    ap.add_argument("--pairs", action="store_true", help="the minimal pairs of lowering_pairs.json")
    ap.add_argument("--print-moves", action="store_true", help="one row per perturbation")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per lowering")
    ap.add_argument("--jobs", type=int, default=2, help="lowerings at a time")
    ap.add_argument(
        "--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="CP-SAT seconds per loop"
    )
    ap.add_argument("--json", help="write every probe's details here")
    ap.add_argument("--cache", help="keep verdicts in this folder (resume a long run)")
    args = ap.parse_args(argv)

    from ws_solver.triton.guard.client import LoweringGuard

    names = tuple(p for p in args.plans.split(",") if p)
    unknown = set(names) - set(PLANS)
    if unknown:
        ap.error(f"unknown plans: {', '.join(sorted(unknown))}")
    corpus = ttgir_dir()
    files = sorted(p.name for p in corpus.glob("*.ttgir") if fnmatch.fnmatch(p.name, args.files))
    options = SolveOptions(time_limit=args.time_limit, workers=2)
    variants: list[Variant] = []
    skipped: list[tuple[int, dict, str]] = []
    if args.pairs:
        resolved = resolved_pairs()
        skipped = [(i, pair, why) for i, pair, why in resolved if isinstance(why, str)]
        variants = pair_variants(resolved=resolved)
        for index, pair, why in skipped:
            print(f"pair {index} {pair['rule']} skipped: {why}", file=sys.stderr, flush=True)
    else:
        for name in files:
            variants.extend(variants_for(name, names, args.moves, options))
    print(f"{len(variants)} lowerings of {len(files)} files", file=sys.stderr, flush=True)

    local = threading.local()
    guards: list[LoweringGuard] = []
    lock = threading.Lock()
    done = [0]
    start = time.monotonic()

    def run(variant: Variant) -> None:
        guard = getattr(local, "guard", None)
        if guard is None:
            guard = local.guard = LoweringGuard()
            with lock:
                guards.append(guard)
        variant.verdict = probe(variant, args.timeout, guard, args.cache)
        with lock:
            done[0] += 1
            if done[0] % 50 == 0:
                print(
                    f"  {done[0]}/{len(variants)} ({time.monotonic() - start:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )

    try:
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            list(pool.map(run, variants))
    finally:
        for guard in guards:
            guard.shutdown()

    print("| file | plan | partitions | lowering | rules broken | error |")
    print("|---|---|---|---|---|---|")
    for v in variants:
        if v.move is None or args.print_moves:
            error = v.verdict["error"] if v.verdict["status"] != "ok" else ""
            parts = "/".join("triton" if p < 0 else str(p) for p in v.partitions)
            hopper = "" if v.hopper else " (no Hopper fix)"
            print(
                f"| {v.file} | {v.plan}{hopper} | {parts} | {cell(v.verdict)} | "
                f"{' '.join(v.rules)} | {error[:120]} |"
            )
    for index, pair, why in skipped:
        print(f"| {pair['file']} | pair {index} {pair['rule']} | | skipped | | {why} |")
    if args.moves:
        print()
        print("| file | plan | moves | ok | failed | hang | crash | failing passes |")
        print("|---|---|---|---|---|---|---|---|")
        groups: dict[tuple[str, str], list[Variant]] = {}
        for v in variants:
            if v.move is not None:
                groups.setdefault((v.file, v.base), []).append(v)
        for (name, base), group in groups.items():
            count = Counter(v.verdict["status"] for v in group)
            where = Counter(cell(v.verdict) for v in group if v.verdict["status"] != "ok")
            print(
                f"| {name} | {base} | {len(group)} | {count['ok']} | {count['error']} | "
                f"{count['hang']} | {count['crash']} | "
                f"{', '.join(f'{k} x{n}' for k, n in where.most_common())} |"
            )
    if args.moves:
        print()
        print("| rule | plans breaking it | lowered ok | failed | hung | crashed |")
        print("|---|---|---|---|---|---|")
        rules = sorted({r for v in variants for r in v.rules}, key=lambda r: int(r[1:]))
        for rule in rules:
            count = Counter(v.verdict["status"] for v in variants if rule in v.rules)
            print(
                f"| {rule} | {sum(count.values())} | {count['ok']} | {count['error']} | "
                f"{count['hang']} | {count['crash']} |"
            )
        clean = Counter(v.verdict["status"] for v in variants if not v.rules)
        print(
            f"| (none) | {sum(clean.values())} | {clean['ok']} | {clean['error']} | "
            f"{clean['hang']} | {clean['crash']} |"
        )
    total = Counter(cell(v.verdict) for v in variants)
    print()
    print("totals: " + ", ".join(f"{k} {n}" for k, n in total.most_common()))
    if args.json:
        records = [
            {
                "file": v.file,
                "plan": v.plan,
                "base": v.base,
                "partitions": v.partitions,
                "move": v.move,
                "rules": v.rules,
                **v.verdict,
            }
            for v in variants
        ]
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

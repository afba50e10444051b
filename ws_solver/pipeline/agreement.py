"""Do two plans of one loop partition it the same way, up to the partitions' numbering?

Used to put ws_solver's heuristic beside its seed, Triton's own partition scheduler (PR
#7312, Triton 3.7+): the partitions are compared as sets of graph nodes, so a plan that
numbers them differently, or leaves a partition id empty (Triton's scheduler never gives
an MMA or load partition id 0, so with no other partition, 0 is left empty), agrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from ..model.check import check_plan
from ..model.cost import evaluate
from ..model.graph import LoopGraph
from ..model.plan import Plan, is_assignable
from ..model.target import Target


@dataclass(frozen=True)
class Agreement:
    """`b` compared with `a`: `mapping` takes each of a's used partition ids to the b id
    that shares the most nodes with it (a bijection as far as the counts allow);
    `differing` are the nodes whose partition sets differ under it."""

    partitions: tuple[int, int]  # used (non-empty) partitions of a and of b
    mapping: dict[int, int]
    differing: tuple[int, ...]

    @property
    def agree(self) -> bool:
        return self.partitions[0] == self.partitions[1] and not self.differing


def used(plan: Plan) -> list[int]:
    """Partition ids that run at least one node."""
    return sorted({p for parts in plan.assignment for p in parts})


def agreement(a: Plan, b: Plan) -> Agreement:
    """Compare `b` with `a` node by node, up to a relabelling of partition ids."""
    ids_a, ids_b = used(a), used(b)
    nodes_a = {p: set(a.nodes_in(p)) for p in ids_a}
    nodes_b = {p: set(b.nodes_in(p)) for p in ids_b}
    mapping = _best_mapping(nodes_a, nodes_b)
    differing = tuple(
        n
        for n, (pa, pb) in enumerate(zip(a.assignment, b.assignment, strict=True))
        if tuple(sorted(mapping.get(p, -1 - p) for p in pa)) != tuple(sorted(pb))
    )
    return Agreement((len(ids_a), len(ids_b)), mapping, differing)


def _best_mapping(nodes_a: dict[int, set[int]], nodes_b: dict[int, set[int]]) -> dict[int, int]:
    """The injective map between used ids that keeps the most nodes in place (ties: the
    first in lexicographic order). Plans have a handful of partitions: all are tried."""
    ids_a, ids_b = list(nodes_a), list(nodes_b)
    if len(ids_a) <= len(ids_b):
        options = (dict(zip(ids_a, p, strict=True)) for p in permutations(ids_b, len(ids_a)))
    else:
        options = (
            {a: b for a, b in zip(p, ids_b, strict=True)} for p in permutations(ids_a, len(ids_b))
        )
    best, best_score = {}, -1
    for option in options:
        score = sum(len(nodes_a[x] & nodes_b[y]) for x, y in option.items())
        if score > best_score:
            best, best_score = option, score
    return best


def differences(graph: LoopGraph, a: Plan, b: Plan, found: Agreement) -> list[dict]:
    """The differing nodes, for people: label, op, line, each plan's partitions, and
    whether a strategy decides the node (else it follows from the nodes it holds or
    belongs to: region ops, terminators)."""
    out = []
    for n in found.differing:
        node = graph.nodes[n]
        out.append(
            {
                "node": n,
                "label": node.label,
                "op": node.op_name,
                "role": node.role.value,
                "line": node.line,
                "decided": is_assignable(graph, n),
                "a": list(a.assignment[n]),
                "b": list(b.assignment[n]),
            }
        )
    return out


def plan_brief(plan: Plan, graph: LoopGraph, target: Target) -> dict:
    """What a comparison shows of a plan: used partitions, modeled II, objective, problems."""
    cost = evaluate(plan, graph, target)
    return {
        "specialized": len(used(plan)) > 1,
        "partitions": len(used(plan)),
        "roles": [p.role for p in plan.partitions if p.id in used(plan)],
        "ii": cost.ii,
        "objective": cost.objective,
        "violations": check_plan(plan, graph, target),
    }


def side_by_side(graph: LoopGraph, target: Target, heuristic: Plan, seed: Plan) -> dict:
    """The seed's plan beside the heuristic's, as comparisons record it."""
    found = agreement(heuristic, seed)
    return {
        "agree": found.agree,
        "partitions": {"heuristic": found.partitions[0], "seed": found.partitions[1]},
        "seed": plan_brief(seed, graph, target),
        "differing": differences(graph, heuristic, seed, found),
    }


def seed_summary(records: list[dict], triton: str) -> dict:
    """The seed column's summary over compare records (those with a "seed" entry)."""
    compared = [r["seed"] for r in records if "seed" in r and "error" not in r["seed"]]
    return {
        "triton": triton,
        "loops": len(compared),
        "agree": sum(s["agree"] for s in compared),
        "failed": sum(1 for r in records if "error" in r.get("seed", {})),
    }

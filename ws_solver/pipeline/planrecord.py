"""A plan-cache record: a solved plan plus what it claims about its loop, checked on the way
back in.

The cache (``plancache``) stores text under a key, signed with the cache folder's secret (a
record not signed with it, planted or torn, is refused first); a record that is valid JSON
can still be a wrong plan (edited by hand, torn and patched, written by a buggy build, meant
for another loop, copied under another key's name). ``decode`` trusts nothing: the record's
checksum, the cache key and the loop and target it names, the plan's shape against the loop's
graph (node count, partition ids, channels), and the cost model's objective and violations,
recomputed, against the ones recorded. Any mismatch is a ``BadRecord``: the caller solves
again and overwrites it.
"""

from __future__ import annotations

import json
from typing import Any

from ..core import readers
from ..model.check import check_plan
from ..model.cost import evaluate
from ..model.graph import LoopGraph
from ..model.plan import Plan
from ..model.target import Target
from . import plancache

FIELDS = ("key", "plan", "reason", "details", "loop", "target", "nodes", "objective", "violations")


class BadRecord(ValueError):
    """A cached record that does not hold a usable plan for the loop asked about."""


def encode(
    plan: Plan, reason: str, details: dict, graph: LoopGraph, target: Target, key: str
) -> str:
    """The record of ``plan`` for ``graph`` on ``target``, as stored text under the cache
    key ``key`` (signed with it: the record is no record under any other key)."""
    body = {
        "key": key,
        "plan": plan.to_dict(),
        "reason": reason,
        "details": details,
        "loop": graph.name,
        "target": target.name,
        "nodes": len(graph.nodes),
        "objective": evaluate(plan, graph, target).objective,
        "violations": check_plan(plan, graph, target),
    }
    body = readers.loads(json.dumps(body))  # the form it is read back in (lists, not tuples)
    return json.dumps({**body, "digest": plancache.sign(body)}, sort_keys=True)


def decode(text: str, graph: LoopGraph, target: Target, key: str) -> tuple[Plan, str, dict]:
    """(plan, reason, details) of a record stored under the cache key ``key``; ``BadRecord``
    saying why it is not one for ``graph`` on ``target`` under that key."""
    if isinstance(text, plancache.Unreadable):
        raise BadRecord(text.problem)
    record = _parse(text)
    body = {name: record[name] for name in FIELDS}
    if not plancache.signed(body, record["digest"]):
        raise BadRecord("its checksum does not match its content")
    if record["key"] != key:
        raise BadRecord("it was stored under another key (copied or renamed)")
    if (record["loop"], record["target"]) != (graph.name, target.name):
        raise BadRecord(f"it is for {record['loop']} on {record['target']}")
    if record["nodes"] != len(graph.nodes):
        raise BadRecord(f"it is for a loop of {record['nodes']} nodes, not {len(graph.nodes)}")
    try:
        plan = Plan.from_dict(record["plan"])
    except (KeyError, TypeError, ValueError) as e:
        raise BadRecord(f"its plan does not read back ({type(e).__name__}: {e})") from None
    problem = shape_problem(plan, graph, target)
    if problem:
        raise BadRecord(problem)
    try:
        objective = evaluate(plan, graph, target).objective
        violations = check_plan(plan, graph, target)
    except Exception as e:  # a plan evaluate cannot take is not a plan for this loop
        raise BadRecord(f"its plan cannot be evaluated ({type(e).__name__}: {e})") from None
    if objective != record["objective"]:
        raise BadRecord(
            f"its plan's objective is {objective}, the record says {record['objective']}"
        )
    if violations != record["violations"]:
        raise BadRecord("its plan does not break the limits the record says it breaks")
    if not isinstance(record["reason"], str) or not isinstance(record["details"], dict):
        raise BadRecord("its reason or details are not text and a mapping")
    return plan, record["reason"], record["details"]


def shape_problem(plan: Plan, graph: LoopGraph, target: Target) -> str:
    """Why ``plan`` cannot be a plan of ``graph`` on ``target`` at all ("" when its shape
    fits): the loop and target it names, one partition set per node, partition ids 0..P-1,
    channels between known nodes and partitions."""
    if (plan.loop, plan.target) != (graph.name, target.name):
        return f"its plan is for {plan.loop} on {plan.target}"
    if len(plan.assignment) != len(graph.nodes):
        return f"its plan assigns {len(plan.assignment)} nodes, the loop has {len(graph.nodes)}"
    ids = [p.id for p in plan.partitions]
    if not ids or ids != list(range(len(ids))):
        return f"its plan's partition ids are {ids}, not 0..P-1"
    known = set(ids)
    for node, parts in enumerate(plan.assignment):
        if not set(parts) <= known or list(parts) != sorted(set(parts)):
            return f"its plan puts node {node} in partitions {list(parts)}, of {ids}"
    for c in plan.channels:
        if not 0 <= c.producer < len(graph.nodes) or not {c.src, c.dst} <= known:
            return f"its plan has a channel from node {c.producer} ({c.src} -> {c.dst})"
    return ""


def _parse(text: str) -> dict[str, Any]:
    try:
        record = readers.loads(text)
    except readers.BadJSON as e:
        raise BadRecord(str(e)) from None
    if not isinstance(record, dict):
        raise BadRecord("it is not a JSON object")
    missing = [name for name in (*FIELDS, "digest") if name not in record]
    if missing:
        raise BadRecord(f"it has no {', '.join(missing)}")
    return record

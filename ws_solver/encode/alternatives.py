"""`alternatives`: a loop's best plans that differ in what reaches the binary, best first.

Each round solves the same exact model as `solve`, plus one no-good cut per plan already
found, so round r returns the best plan not yet listed (proven so when its status is
OPTIMAL). Round 0 is `solve`'s own answer (same hint, same search), so rank 0 is the modeled
optimum.

Two plans are the same alternative when every op that cannot be duplicated runs in the same
partitions (partition ids are canonical in the model: 0 is Triton's default region, the
interchangeable ones come in first-use order, so this is "up to relabelling"). The rest of a
plan (warps, registers, channel depths, where cheap duplicable ops are copied) is what the
model prefers for that assignment. Triton 3.6 does not pass warps or channel depths to the
binary (docs/dropin.md), and copies of cheap views mostly compile to the same code, so
cutting on anything finer would spend the K candidates on plans with one cubin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.options import SURVEY_BUDGET, SolverBudget
from ..model.check import check_plan
from ..model.cost import evaluate
from ..model.graph import LoopGraph
from ..model.plan import Plan
from ..model.target import Target
from .build import encode
from .decode import decode, fit
from .solve import add_hint, search, solve, valid_cost
from .variables import EncodeOptions, Encoding


@dataclass(frozen=True)
class Alternative:
    """One enumerated plan: its rank, how it was found, and its modeled cost."""

    rank: int
    plan: Plan
    ii: int
    objective: int
    status: str  # "OPTIMAL": no plan outside the earlier ranks is better; else "FEASIBLE"
    signature: tuple[tuple[int, ...], ...]  # partitions of each node the cuts cover


def cut_nodes(enc: Encoding) -> list[int]:
    """The nodes whose placement tells alternatives apart (see the module docstring)."""
    fixed = [n for n in enc.table.assignable if n not in enc.table.duplicable]
    return fixed or list(enc.table.assignable)


def signature(enc: Encoding, plan: Plan) -> tuple[tuple[int, ...], ...]:
    """The partitions of each covered node, with the plan's partitions numbered as the
    model numbers them."""
    canonical = fit(enc, plan)
    return tuple(canonical.assignment[n] for n in cut_nodes(enc))


def exclude(enc: Encoding, sig: tuple[tuple[int, ...], ...]) -> None:
    """No-good cut: at least one covered node runs in partitions other than in `sig`."""
    flips = []
    for n, parts in zip(cut_nodes(enc), sig, strict=True):
        for p in range(enc.partitions):
            flips.append(~enc.x[n, p] if p in parts else enc.x[n, p])
    enc.model.add_bool_or(flips)


def alternatives(
    graph: LoopGraph,
    target: Target,
    k: int,
    hint: Plan | None = None,
    budget: SolverBudget = SURVEY_BUDGET,
) -> list[Alternative]:
    """Up to `k` plans, best first under the cost model, distinct in their signature.

    Fewer come back when the model has no further plan, or when a round's time limit
    (deterministic seconds, per round) ends without one."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    first = solve(graph, target, hint=hint, budget=budget)
    if first.objective is None:
        return []
    sig = signature(encode(graph, target), first.plan)
    found = [Alternative(0, _named(first.plan, 0), first.ii, first.objective, first.status, sig)]
    while len(found) < k:
        enc = encode(graph, target)
        for alt in found:
            exclude(enc, alt.signature)
        if hint is not None and valid_cost(hint, graph, target) is not None:
            add_hint(enc, hint)  # ignored by CP-SAT when the cuts exclude it
        result = search(enc, budget, prover=excluding(graph, target, found))
        if result.value is None:
            break
        plan = decode(enc, result.value)
        if check_plan(plan, graph, target):
            break  # the model and `check_plan` disagree: stop rather than list a bad plan
        cost = evaluate(plan, graph, target)
        sig = signature(enc, plan)
        if cost.objective != result.objective or any(a.signature == sig for a in found):
            break
        rank = len(found)
        found.append(
            Alternative(rank, _named(plan, rank), cost.ii, cost.objective, result.status, sig)
        )
    return found


def excluding(graph: LoopGraph, target: Target, found: list[Alternative]):
    """`search`'s prover for a round: the proof model, cut as the round's model is."""

    def prover() -> Encoding:
        enc = encode(graph, target, EncodeOptions(symmetry_order="heaviest"))
        for alt in found:
            exclude(enc, signature(enc, alt.plan))
        return enc

    return prover


def _named(plan: Plan, rank: int) -> Plan:
    return replace(plan, strategy=f"explore:{rank}")

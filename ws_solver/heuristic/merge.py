"""The incremental merge engine: data nodes start alone, rules merge partitions to a fixed point.

Partitions are union-find sets of data nodes; each root carries the OR of its members' flags.
Every merge removes a partition, so both phases terminate after at most |data| - 1 merges.
"""

from __future__ import annotations

from ..clock import NO_DEADLINE, Deadline
from ..model.graph import LoopGraph
from ..model.plan import Merge
from .facts import TMEM, Facts
from .rules import EDGE_RULES, PAIR_RULES, VETOES, Rule, rules_for


class MergeState:
    def __init__(self, facts: Facts, deadline: Deadline = NO_DEADLINE) -> None:
        self.facts = facts
        self.deadline = deadline
        self.graph: LoopGraph = facts.graph
        self.parent = list(range(len(self.graph.nodes)))
        self.flags = list(facts.flags)
        self.members: dict[int, list[int]] = {n: [n] for n in sorted(facts.data)}
        self.crossing = list(facts.edges)
        self.merges: list[Merge] = []

    def find(self, n: int) -> int:
        parent = self.parent
        root = n
        while parent[root] != root:
            root = parent[root]
        while parent[n] != root:
            parent[n], n = root, parent[n]
        return root

    def roots(self) -> list[int]:
        """Current partitions, by their smallest member (roots are kept smallest)."""
        return sorted(self.members)

    def merge(self, rule: str, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        keep, gone = min(ra, rb), max(ra, rb)
        self.parent[gone] = keep
        self.flags[keep] |= self.flags[gone]
        self.members[keep].extend(self.members.pop(gone))
        self.merges.append(Merge(rule, a, b))
        self.crossing = [e for e in self.crossing if self.find(e.src) != self.find(e.dst)]
        return keep

    def vetoed(self, ra: int, rb: int) -> bool:
        return any(veto(self, ra, rb) for veto in VETOES)

    def only_consumer(self, ru: int, rv: int) -> bool:
        """Whether every data edge leaving partition `ru` goes into partition `rv`."""
        consumers = self.facts.consumers
        for m in self.members[ru]:
            for c in consumers[m]:
                rc = self.find(c)
                if rc != ru and rc != rv:
                    return False
        return True

    def tmem_buffers(self, root: int) -> set[str]:
        """Tensor-memory allocations the partition's TMEM ops touch."""
        found: set[str] = set()
        for m in self.members[root]:
            if self.facts.flags[m] & TMEM:
                found |= self.facts.tensor_buffers[m]
        return found

    # -- rule application ------------------------------------------------------------------------
    def first_match(self, rule: Rule) -> tuple[int, int] | None:
        flags = self.flags
        if rule.scope == "edge":
            test = rule.test
            for e in self.crossing:
                ru, rv = self.find(e.src), self.find(e.dst)
                if test(self, e, flags[ru], flags[rv]) and not self.vetoed(ru, rv):
                    return e.src, e.dst
            return None
        roots = self.roots()
        for i, a in enumerate(roots):
            for b in roots[i + 1 :]:
                if rule.test(self, a, b, flags[a], flags[b]) and not self.vetoed(a, b):
                    return a, b
        return None

    def run(self, rules: tuple[Rule, ...]) -> None:
        """Apply the first matching rule, restart from the top; stop when none matches."""
        while True:
            self.deadline.check("the heuristic's merges")
            for rule in rules:
                hit = self.first_match(rule)
                if hit is not None:
                    self.merge(rule.name, *hit)
                    break
            else:
                return


def merge_data_partitions(facts: Facts, deadline: Deadline = NO_DEADLINE) -> MergeState:
    """Phase 1 (edge rules) then phase 2 (pair rules), each to a fixed point."""
    state = MergeState(facts, deadline)
    state.run(rules_for(facts.target, EDGE_RULES))
    state.run(rules_for(facts.target, PAIR_RULES))
    return state

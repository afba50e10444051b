"""The heuristic's incremental merge engine makes the merges a plain rescan makes.

The reference below is the engine as first written: after every merge it rescans every
crossing edge and every pair of partitions, in order, and reads the partitions' members
directly. The incremental engine (heuristic_seed/merge.py) must pick the same merge every
time, on every corpus loop, for both targets and with a partition cap that forces merges.
"""

from __future__ import annotations

import dataclasses
import random
from functools import cache
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.heuristic.assign import _cheapest_pair, cap_partitions, group_cost
from ws_solver.heuristic.facts import TMEM, facts_for
from ws_solver.heuristic.merge import MergeState, _EdgeIndex, merge_data_partitions
from ws_solver.heuristic.rules import EDGE_RULES, PAIR_RULES, rules_for
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.graph import Edge, LoopGraph, Node
from ws_solver.model.kinds import NodeKind, NodeRole
from ws_solver.model.target import SM90, SM100

TTGIR = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
FILES = sorted(p.name for p in TTGIR.glob("*.ttgir"))


@cache
def graphs(name: str) -> tuple[LoopGraph, ...]:
    return tuple(build_graphs(ir.parse((TTGIR / name).read_text())))


class Rescan(MergeState):
    """The engine as first written: every choice rescans from scratch."""

    def only_consumer(self, ru: int, rv: int) -> bool:
        consumers = self.facts.consumers
        for m in self.members[ru]:
            for c in consumers[m]:
                if self.find(c) not in (ru, rv):
                    return False
        return True

    def tmem_buffers(self, root: int) -> set[str]:
        found: set[str] = set()
        for m in self.members[root]:
            if self.facts.flags[m] & TMEM:
                found |= self.facts.tensor_buffers[m]
        return found

    def first_match(self, rule):
        flags = self.flags
        if rule.scope == "edge":
            for e in self.facts.edges:
                ru, rv = self.find(e.src), self.find(e.dst)
                if ru == rv:
                    continue
                if rule.test(self, e, flags[ru], flags[rv]) and not self.vetoed(ru, rv):
                    return e.src, e.dst
            return None
        roots = self.roots()
        for i, a in enumerate(roots):
            for b in roots[i + 1 :]:
                if rule.test(self, a, b, flags[a], flags[b]) and not self.vetoed(a, b):
                    return a, b
        return None

    def run(self, rules) -> None:
        while True:
            for rule in rules:
                hit = self.first_match(rule)
                if hit is not None:
                    self.merge(rule.name, *hit)
                    break
            else:
                return


@pytest.mark.parametrize("name", FILES)
def test_incremental_merges_are_the_rescans(name: str) -> None:
    for graph in graphs(name):
        for base in (SM90, SM100):
            target = dataclasses.replace(base, max_partitions=2)
            facts = facts_for(graph, target)
            fast = merge_data_partitions(facts)
            slow = Rescan(facts)
            slow.run(rules_for(target, EDGE_RULES))
            slow.run(rules_for(target, PAIR_RULES))
            assert fast.merges == slow.merges
            assert {r: sorted(m) for r, m in fast.members.items()} == {
                r: sorted(m) for r, m in slow.members.items()
            }
            table = cost_table(graph, target)
            cap_partitions(fast, table, target.max_partitions)
            cap_partitions(slow, table, target.max_partitions)
            assert fast.merges == slow.merges


def _first_rule(state: MergeState, index: _EdgeIndex, i: int) -> int | None:
    e = state.facts.edges[i]
    ru, rv = state.find(e.src), state.find(e.dst)
    if ru == rv or state.vetoed(ru, rv):
        return None
    fu, fv = state.flags[ru], state.flags[rv]
    return next((k for k, test in index.tests if test(state, e, fu, fv)), None)


@pytest.mark.parametrize("name", [f for f in FILES if "attention" in f or "cond_reset" in f])
def test_index_and_neighbours_stay_right_under_any_merges(name: str) -> None:
    """Merge random pairs of partitions (mostly joined by an edge): after each merge, every
    crossing edge's first rule is what a fresh look gives, each rule's first edge is the
    first that matches it, and the neighbour counts answer `only_consumer` as a scan of the
    members does."""
    for graph in graphs(name):
        for target in (SM90, SM100):
            facts = facts_for(graph, target)
            rules = rules_for(target, EDGE_RULES)
            for seed in range(4):
                rng = random.Random(seed)
                state, slow = MergeState(facts), Rescan(facts)
                index = state._index = _EdgeIndex(state, rules)
                while len(state.members) > 1:
                    # Odd seeds: mostly along a crossing edge, as the rules merge; even
                    # ones: any pair.
                    edges = [e for e in facts.edges if state.find(e.src) != state.find(e.dst)]
                    e = rng.choice(edges) if edges and seed % 2 and rng.random() < 0.8 else None
                    a, b = (e.src, e.dst) if e else rng.sample(state.roots(), 2)
                    state.merge("random", a, b)
                    slow.merge("random", a, b)
                    crossing = [
                        i
                        for i, e in enumerate(facts.edges)
                        if state.find(e.src) != state.find(e.dst)
                    ]
                    for i in crossing:
                        assert index.rule_of[i] == _first_rule(state, index, i)
                    for k, _ in index.tests:
                        first = next((i for i in crossing if index.rule_of[i] == k), None)
                        edge = facts.edges[first] if first is not None else None
                        want = (edge.src, edge.dst) if edge is not None else None
                        assert index.first(k) == want
                    for ru in state.roots():
                        for rv in state.roots():
                            if ru != rv:
                                assert state.only_consumer(ru, rv) == slow.only_consumer(ru, rv)
                        assert state.tmem_buffers(ru) == slow.tmem_buffers(ru)


def test_a_merge_can_make_its_feeder_an_only_consumer() -> None:
    """x feeds two STORE partitions of one kind; merging them makes their union x's only
    consumer, so `cheap_into_special_consumer` now matches x's edges into either side:
    the merge must look at them though neither side's flags changed."""
    tile = 128 * 64
    nodes = (
        Node(0, NodeRole.OP, NodeKind.LOAD, "tt.descriptor_load", "%a", 0, elements=tile),
        Node(1, NodeRole.OP, NodeKind.NONE, "arith.mulf", "%x", 1, elements=tile),
        Node(2, NodeRole.OP, NodeKind.STORE, "tt.store", "tt.store", 2, elements=tile),
        Node(3, NodeRole.OP, NodeKind.STORE, "tt.store", "tt.store", 3, elements=tile),
        Node(4, NodeRole.TERMINATOR, NodeKind.NONE, "scf.yield", "scf.yield", 4),
    )
    edges = (
        Edge(0, 1, 0, "%a", "tensor", 2 * tile, tile),
        Edge(1, 2, 0, "%x", "tensor", 2 * tile, tile),
        Edge(1, 3, 0, "%x", "tensor", 2 * tile, tile),
    )
    graph = LoopGraph("feeder", 0, "cuda:100", 4, 1, nodes, edges)
    facts = facts_for(graph, SM100)
    state = MergeState(facts)
    index = state._index = _EdgeIndex(state, rules_for(SM100, EDGE_RULES))
    special = [k for k, t in index.tests if t.__name__ == "cheap_into_special_consumer"]
    into_stores = [i for i, e in enumerate(facts.edges) if e.src == 1]
    assert state.flags[2] == state.flags[3] and all(index.rule_of[i] is None for i in into_stores)
    state.merge("store_store", 2, 3)
    assert [index.rule_of[i] for i in into_stores] == special * 2
    assert index.first(special[0]) == (1, 2)


def _cheapest_by_sorting(state, cost):
    """cap_partitions' choice as first written: every pair, sorted, the first allowed."""
    roots = sorted(cost)
    pairs = sorted((cost[a] + cost[b], a, b) for i, a in enumerate(roots) for b in roots[i + 1 :])
    allowed = [p for p in pairs if not state.vetoed(p[1], p[2])]
    return (allowed or pairs)[0][1:]


@pytest.mark.parametrize("seed", range(40))
def test_cheapest_pair_is_the_first_of_the_sorted_pairs(seed: int) -> None:
    rng = random.Random(seed)

    class Vetoes:
        forbidden = {
            (a, b) for a in range(12) for b in range(a + 1, 12) if rng.random() < 0.3 * (seed % 4)
        }

        def vetoed(self, a: int, b: int) -> bool:
            return (min(a, b), max(a, b)) in self.forbidden

    state = Vetoes()
    cost = {r: rng.choice([0, 1, 2, 3, 5, 8]) for r in rng.sample(range(12), rng.randint(2, 12))}
    found = _cheapest_pair(state, cost, vetoes=True) or _cheapest_pair(state, cost, False)
    assert found == _cheapest_by_sorting(state, cost)


def test_group_cost_is_kept_by_the_cap() -> None:
    """cap_partitions adds the costs of what it merges instead of summing members again."""
    (graph,) = graphs("attention_fwd.d64_m128n64_w4_s3.sm100.ttgir")
    target = dataclasses.replace(SM100, max_partitions=2)
    state = merge_data_partitions(facts_for(graph, target))
    table = cost_table(graph, target)
    before = sum(group_cost(table, m) for m in state.members.values())
    cap_partitions(state, table, 2)
    assert len(state.members) == 2
    assert sum(group_cost(table, m) for m in state.members.values()) == before

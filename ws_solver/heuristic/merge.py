"""The incremental merge engine: data nodes start alone, rules merge partitions to a fixed point.

Partitions are union-find sets of data nodes; each root carries the OR of its members' flags.
Every merge removes a partition, so both phases terminate after at most |data| - 1 merges.

Nothing is rescanned per merge: each partition keeps its crossing data edges grouped by the
partition at their other end (`out`, `into`), and while `run` works through a rule list, an
`_EdgeIndex` knows the first edge rule each crossing edge matches. An edge rule's verdict
depends on the edge, the flags of the two partitions it joins (the vetoes read them too) and
whether the producer's partition feeds only the consumer's (`only_consumer`),
so after a merge only the edges whose ends changed in one of these ways are matched again.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable

from ..core.clock import NO_DEADLINE, Deadline
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
        self.merges: list[Merge] = []
        # Crossing data edges (positions in facts.edges) by partition pair: out[a][b] is the
        # list of edges from a to b, and into[b][a] the same list.
        self.out: dict[int, dict[int, list[int]]] = {n: {} for n in self.members}
        self.into: dict[int, dict[int, list[int]]] = {n: {} for n in self.members}
        for i, e in enumerate(facts.edges):
            pair = self.out[e.src].setdefault(e.dst, [])
            self.into[e.dst][e.src] = pair
            pair.append(i)
        self.tmem = {n: set(facts.tensor_buffers[n]) for n in self.members if facts.flags[n] & TMEM}
        self._tmem_users: dict[str, set[int]] = {}  # buffer -> partitions that touch it
        for n, buffers in self.tmem.items():
            for b in buffers:
                self._tmem_users.setdefault(b, set()).add(n)
        # Partitions by their flags, each list sorted: what vetoes and pair rules
        # that read flags alone tell apart.
        self._kinds: dict[int, list[int]] = {}
        for n in self.members:
            self._kinds.setdefault(self._kind(n), []).append(n)
        self._index: _EdgeIndex | None = None

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
        changed = _Ends(self, keep, gone).changed if self._index is not None else ()
        for r in (keep, gone):
            _remove(self._kinds, self._kind(r), r)
        self.parent[gone] = keep
        self.flags[keep] |= self.flags[gone]
        self.members[keep] = _joined(self.members[keep], self.members.pop(gone))
        if gone in self.tmem:
            for buffer in self.tmem[gone]:
                self._tmem_users[buffer].discard(gone)
                self._tmem_users[buffer].add(keep)
            self.tmem[keep] = self.tmem.get(keep, set()) | self.tmem.pop(gone)
        bisect.insort(self._kinds.setdefault(self._kind(keep), []), keep)
        self._rewire(keep, gone)
        self.merges.append(Merge(rule, a, b))
        if self._index is not None:
            self._index.update(changed)
        return keep

    def _rewire(self, keep: int, gone: int) -> None:
        """The crossing edges after `gone` joined `keep`: its edges leave or enter `keep`,
        and those between the two are inside it."""
        for table, mirror in ((self.out, self.into), (self.into, self.out)):
            mine = table[keep]
            for other, edges in table.pop(gone).items():
                if other == keep:
                    continue
                theirs = mirror[other]
                del theirs[gone]
                ours = mine.get(other)
                joined = edges if ours is None else _joined(ours, edges)
                mine[other] = theirs[keep] = joined
            mine.pop(gone, None)

    def vetoed(self, ra: int, rb: int) -> bool:
        return any(veto(self, ra, rb) for veto in VETOES)

    def only_consumer(self, ru: int, rv: int) -> bool:
        """Whether every data edge leaving partition `ru` goes into partition `rv`."""
        return all(r == rv for r in self.out[ru])

    def tmem_buffers(self, root: int) -> set[str]:
        """Tensor-memory allocations the partition's TMEM ops touch."""
        return self.tmem.get(root, set())

    def tmem_sharers(self, root: int) -> set[int]:
        """The other partitions that touch one of the partition's tensor-memory buffers."""
        found = set().union(*(self._tmem_users[b] for b in self.tmem.get(root, ())))
        found.discard(root)
        return found

    def _kind(self, root: int) -> int:
        return self.flags[root]

    # -- rule application ------------------------------------------------------------------------
    def first_pair(self, rule: Rule) -> tuple[int, int] | None:
        """The first pair of partitions (a < b, by a then b) the pair rule merges."""
        flags = self.flags
        if rule.partners is not None:
            for a in self.roots():
                for b in sorted(b for b in rule.partners(self, a) if b > a):
                    if rule.test(self, a, b, flags[a], flags[b]) and not self.vetoed(a, b):
                        return a, b
            return None
        # The verdict is the same for every pair of the same two kinds: per pair of kinds,
        # try the first pair (the smallest a, then the smallest b above it).
        best = None
        kinds = list(self._kinds.values())
        for of_a in kinds:
            a = of_a[0]
            if best is not None and a > best[0]:
                continue
            for of_b in kinds:
                j = bisect.bisect_right(of_b, a)
                if j == len(of_b) or (best is not None and (a, of_b[j]) >= best):
                    continue
                b = of_b[j]
                if rule.test(self, a, b, flags[a], flags[b]) and not self.vetoed(a, b):
                    best = (a, b)
        return best

    def run(self, rules: tuple[Rule, ...]) -> None:
        """Apply the first matching rule, restart from the top; stop when none matches.
        An edge rule matches the first crossing data edge (in graph order) it accepts."""
        self._index = _EdgeIndex(self, rules)
        try:
            while True:
                self.deadline.check("the heuristic's merges")
                for i, rule in enumerate(rules):
                    hit = self.first_pair(rule) if rule.scope == "pair" else self._index.first(i)
                    if hit is not None:
                        self.merge(rule.name, *hit)
                        break
                else:
                    return
        finally:
            self._index = None


def _remove(kinds: dict[int, list[int]], kind: int, root: int) -> None:
    """Take `root` out of its kind's sorted list (and the kind out when it empties)."""
    roots = kinds[kind]
    del roots[bisect.bisect_left(roots, root)]
    if not roots:
        del kinds[kind]


def _joined(a: list[int], b: list[int]) -> list[int]:
    """Both lists in one, the shorter appended to the longer (order does not matter)."""
    if len(a) < len(b):
        a, b = b, a
    a.extend(b)
    return a


def _sole(neighbours: Iterable[int]) -> int | None:
    """The one partition in `neighbours`, or None when there are none or several."""
    found = set(neighbours)
    return found.pop() if len(found) == 1 else None


class _Ends:
    """The crossing edges whose verdict a merge of `gone` into `keep` may change, taken
    before the merge joins their lists (`changed`)."""

    def __init__(self, s: MergeState, keep: int, gone: int) -> None:
        self.keep, self.gone = keep, gone
        merged_out = (set(s.out[keep]) | set(s.out[gone])) - {keep, gone}
        self.sole = _sole(merged_out)  # the merged partition's only consumer partition
        self.changed = [i for r in (keep, gone) for i in _side_edges(s, r, self)]
        # Producers feeding both and nothing else: `only_consumer` into the union turns true.
        small, big = sorted((s.into[keep], s.into[gone]), key=len)
        for x in small:
            if x in big and set(s.out[x]) <= {keep, gone}:
                self.changed += [*s.out[x][keep], *s.out[x][gone]]


def _side_edges(s: MergeState, r: int, ends: _Ends) -> list[int]:
    """Edges of partition `r` (`ends.keep` or `ends.gone`) to match again once merged: all
    of them when the union's flags differ from r's, else its edges into the
    partitions whose `only_consumer` verdict changes (r's sole consumer, and the union's)."""
    keep, gone = ends.keep, ends.gone
    merged_flags = s.flags[keep] | s.flags[gone]
    if s.flags[r] != merged_flags:
        return [i for table in (s.out[r], s.into[r]) for edges in table.values() for i in edges]
    targets = {_sole(s.out[r]), ends.sole} - {None, keep, gone}
    return [i for t in targets for i in s.out[r].get(t, ())]


class _EdgeIndex:
    """For one rule list: the first edge rule each crossing edge matches (unvetoed), and per
    rule a heap of the edges it matches first, stale entries dropped as they surface."""

    def __init__(self, state: MergeState, rules: tuple[Rule, ...]) -> None:
        self.state = state
        self.tests = [(i, r.test) for i, r in enumerate(rules) if r.scope == "edge"]
        self.heaps: list[list[int]] = [[] for _ in rules]
        self.rule_of: list[int | None] = [None] * len(state.facts.edges)
        self.update(range(len(state.facts.edges)))

    def update(self, edges: Iterable[int]) -> None:
        """Match `edges` again (their partitions changed)."""
        s = self.state
        flags, find, all_edges = s.flags, s.find, s.facts.edges
        for i in edges:
            e = all_edges[i]
            ru, rv = find(e.src), find(e.dst)
            found = None
            if ru != rv and not s.vetoed(ru, rv):
                fu, fv = flags[ru], flags[rv]
                for k, test in self.tests:
                    if test(s, e, fu, fv):
                        found = k
                        heapq.heappush(self.heaps[k], i)
                        break
            self.rule_of[i] = found

    def first(self, rule: int) -> tuple[int, int] | None:
        """(src, dst) of the first crossing edge whose first match is `rule`, if any."""
        heap, edges, find = self.heaps[rule], self.state.facts.edges, self.state.find
        while heap:
            i = heap[0]
            e = edges[i]
            if self.rule_of[i] == rule and find(e.src) != find(e.dst):
                return e.src, e.dst
            heapq.heappop(heap)
        return None


def merge_data_partitions(facts: Facts, deadline: Deadline = NO_DEADLINE) -> MergeState:
    """Phase 1 (edge rules) then phase 2 (pair rules), each to a fixed point."""
    state = MergeState(facts, deadline)
    state.run(rules_for(facts.target, EDGE_RULES))
    state.run(rules_for(facts.target, PAIR_RULES))
    return state

"""From merged data partitions to a full assignment: cap, numbering, propagation, duplication.

- Cap: over the target's partition limit, the two cheapest partitions merge (rule "cap").
- Numbering: compute partitions first (the default region, id 0; on sm_90 the one holding the
  wgmma leads), then STORE, MMA, LOAD, so the producer gets the highest id. Compute partitions
  are ordered by modeled busy time, heaviest first, since id 0 gets the kernel's warps.
- Propagation: a non-data node runs where its consumers run (fixed point over the consumer
  relation, both distances). A node that cannot be duplicated runs in exactly one of them: the
  one that sends the fewest bytes to the others (ties: lowest id), never an MMA partition for
  TMEM work. Nodes with no placed consumer take their producers' partition; the rest go to 0.
- Duplication: a cheap duplicable node (index math, views) needed in a partition whose inputs
  are all there already is recomputed there instead of being sent through a channel.
Region ops, terminators and reduce combiners are left to `complete_assignment`.
"""

from __future__ import annotations

from ..core.clock import NO_DEADLINE, Deadline
from ..model.cost_table import CostTable
from ..model.graph import LoopGraph
from ..model.kinds import NodeRole, op_traits
from ..model.plan import complete_assignment, region_members
from ..model.traverse import topological_order
from .facts import LOAD, MMA, MMA_REG, STORE, TMEM, Facts
from .merge import MergeState
from .rules import CAP

COMPUTE, STORE_ROLE, MMA_ROLE, LOAD_ROLE = "compute", "store", "mma", "load"
_ROLE_ORDER = {COMPUTE: 0, STORE_ROLE: 1, MMA_ROLE: 2, LOAD_ROLE: 3}


def role_of(flags: int) -> str:
    if flags & MMA_REG:
        return COMPUTE  # sm_90: the wgmma consumer warp group is the compute partition
    if flags & MMA:
        return MMA_ROLE
    if flags & LOAD:
        return LOAD_ROLE
    if flags & STORE:
        return STORE_ROLE
    return COMPUTE


def group_cost(table: CostTable, members) -> int:
    return sum(table.busy(m, 4) for m in members)


def cap_partitions(state: MergeState, table: CostTable, limit: int) -> None:
    """Merge the cheapest pair of partitions (not vetoed, if any such pair) until within limit."""
    cost = {r: group_cost(table, state.members[r]) for r in state.members}
    while len(state.members) > limit:
        a, b = _cheapest_pair(state, cost, vetoes=True) or _cheapest_pair(state, cost, False)
        total = cost.pop(a) + cost.pop(b)
        cost[state.merge(CAP, a, b)] = total


def _cheapest_pair(state: MergeState, cost: dict[int, int], vetoes: bool):
    """The pair (a, b), a < b, of least summed cost (ties: least a, then b) among the pairs no
    veto forbids (all pairs without `vetoes`); None when there is none."""
    order = sorted(cost, key=lambda r: (cost[r], r))
    best = None
    for i, x in enumerate(order):
        if best is not None and 2 * cost[x] > best[0]:
            break  # every pair left costs more
        for y in order[i + 1 :]:
            pair = (cost[x] + cost[y], min(x, y), max(x, y))
            if best is not None and pair[0] > best[0]:
                break
            if (best is None or pair < best) and not (vetoes and state.vetoed(*pair[1:])):
                best = pair
    return best[1:] if best else None


def number_partitions(
    state: MergeState, table: CostTable, default: int | None = None, lead: tuple[int, ...] = ()
) -> tuple[dict[int, int], list[str]]:
    """Partition id of each merged group's root, and the role of each id. `default` (a root)
    is put first when given; `lead` (roots) take ids 0, 1, ... in that order."""

    def key(root: int):
        flags = state.flags[root]
        role = role_of(flags)
        lead = 0 if flags & MMA_REG else 1
        return (_ROLE_ORDER[role], lead, -group_cost(table, state.members[root]), root)

    roots = sorted(state.roots(), key=key)
    if default is not None:
        lead = (default,)
    roots = [*lead, *(r for r in roots if r not in lead)]
    ids = {r: i for i, r in enumerate(roots)}
    roles = [role_of(state.flags[r]) for r in roots]
    return ids, roles


class _Propagation:
    def __init__(self, graph: LoopGraph, facts: Facts, table: CostTable, roles: list[str]):
        self.graph, self.facts, self.table, self.roles = graph, facts, table, roles
        self.parts: dict[int, set[int]] = {}
        self.descendants: dict[int, list[int]] = {}
        for n in graph.nodes:
            p = n.parent
            while p is not None:
                self.descendants.setdefault(p, []).append(n.id)
                p = graph.nodes[p].parent
        # Region ops also run where their value nodes and yielded producers run.
        self.region_extra: dict[int, list[int]] = {
            n.id: region_members(graph, n.id)
            for n in graph.nodes
            if n.role == NodeRole.OP and op_traits(n.op_name).region
        }

    def where(self, c: int) -> set[int]:
        """Partitions that run node `c` (for region ops: any of their descendants, value
        nodes and yielded producers, as `complete_assignment` will have it)."""
        if c in self.parts:
            return self.parts[c]
        node = self.graph.nodes[c]
        if node.follows_parent and node.parent is not None:
            return self.where(node.parent)
        if c in self.region_extra:
            found: set[int] = set()
            for d in self.descendants.get(c, []) + self.region_extra[c]:
                found |= self.parts.get(d, set())
            return found
        return set()

    def needed_by(self, n: int) -> set[int]:
        want: set[int] = set()
        for c in self.table.consumers[n]:
            if c != n:
                want |= self.where(c)
        return want

    def bytes_to(self, n: int, partition: int) -> int:
        sent = [
            e.bytes
            for e in self.graph.out_edges(n)
            if self.graph.nodes[e.dst].role != NodeRole.TERMINATOR
            and partition in self.where(e.dst)
        ]
        return max(sent, default=0)

    def choose(self, n: int, want: set[int]) -> int:
        """The one partition for a node that cannot be duplicated."""
        cands = sorted(want)
        if self.facts.flags[n] & TMEM:
            cands = [p for p in cands if self.roles[p] != MMA_ROLE] or self.tmem_home(n) or cands
        return min(cands, key=lambda q: (sum(self.bytes_to(n, r) for r in want if r != q), q))

    def tmem_home(self, n: int) -> list[int]:
        """Non-MMA partitions of other TMEM ops on the same tensor-memory allocation."""
        mine = self.facts.tensor_buffers[n]
        found: set[int] = set()
        for m, parts in self.parts.items():
            if m != n and self.facts.flags[m] & TMEM and self.facts.tensor_buffers[m] & mine:
                found |= {p for p in parts if self.roles[p] != MMA_ROLE}
        if not found:
            found = {p for p, r in enumerate(self.roles) if r != MMA_ROLE}
        return sorted(found)[:1] if found else []


def assign(
    graph: LoopGraph,
    facts: Facts,
    table: CostTable,
    data_partition: dict[int, int],
    roles: list[str],
    deadline: Deadline = NO_DEADLINE,
) -> tuple[tuple[int, ...], ...]:
    """Full assignment (per node, sorted partition ids) from the data nodes' partitions."""
    prop = _Propagation(graph, facts, table, roles)
    parts = prop.parts
    for n, p in data_partition.items():
        parts[n] = {p}
    free = [n for n in table.assignable if n not in parts]
    order = topological_order(graph, free)
    backwards = order[::-1]
    # Consumers first: a node runs where the nodes that need it run.
    for _ in range(len(free) + 1):
        deadline.check("the heuristic's assignment")
        changed = False
        for n in backwards:
            want = prop.needed_by(n)
            if not want:
                continue
            if n not in table.duplicable:
                want = {prop.choose(n, want)}
            if parts.get(n) != want:
                parts[n] = want
                changed = True
        if not changed:
            break
    # Leftovers (nothing placed needs them): their producers' partition, else 0.
    for _ in range(len(free) + 1):
        changed = False
        for n in order:
            if n in parts:
                continue
            have: set[int] = set()
            for e in graph.in_edges(n):
                have |= prop.where(e.src)
            if have:
                parts[n] = have if n in table.duplicable else {min(have)}
                changed = True
        if not changed:
            break
    for n in free:
        parts.setdefault(n, {0})
    _duplicate_cheap(graph, table, prop, order=topological_order(graph, list(table.assignable)))
    decided = {n: tuple(sorted(parts[n])) for n in table.assignable}
    return complete_assignment(graph, decided)


def _duplicate_cheap(graph: LoopGraph, table: CostTable, prop: _Propagation, order) -> None:
    """Recompute cheap duplicable nodes where they are needed, if their inputs are there."""
    parts = prop.parts
    for n in order:
        values = table.values_of(n)
        if n not in table.duplicable or not values:
            continue
        for r in sorted(prop.needed_by(n) - parts[n]):
            # The channels of n's values into r that a copy in r saves.
            saved = sum(
                v.producer_busy + v.consumer_busy
                for v in values
                if any(r in prop.where(c) for c in v.consumers)
            )
            if table.busy(n, 4) > saved:
                continue
            inputs = [e.src for e in graph.in_edges(n) if e.src != n]
            if all(r in prop.where(i) for i in inputs):
                parts[n].add(r)

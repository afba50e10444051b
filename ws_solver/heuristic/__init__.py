"""The heuristic partitioner: the incremental merge algorithm of Triton PR #7312, target-aware.

`partition(graph, target)` returns a Plan; `decide(graph, target)` also says why (specialized,
or not and the reason). See rules.py for the ordered merge rules and their vetoes.
"""

from .planner import decide, partition
from .rules import RULE_NAMES

__all__ = ["RULE_NAMES", "decide", "partition"]

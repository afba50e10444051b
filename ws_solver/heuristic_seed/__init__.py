"""Heuristic seed partitioner: the incremental merge algorithm of the seed PR, target-aware.

`partition(graph, target)` returns a Plan; `decide(graph, target)` also says why (specialized,
or not and the reason). See rules.py for the ordered merge rules and their vetoes.
"""

from .rules import RULE_NAMES
from .seed import decide, partition

__all__ = ["RULE_NAMES", "decide", "partition"]

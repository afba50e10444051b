"""Loops in, plans out: the one path from TTGIR text to partitioned TTGIR (`partition`),
the plan cache and its records, heuristic-vs-optimal comparisons, `explore`, stock Triton's
recorded decisions."""

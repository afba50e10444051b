"""Defects of stock Triton's own warp-specialized kernels that the decision check can read off
their TTGIR before keeping one (decision_check: stock's kernel is a candidate only without).

**The partition offset applied twice.** Stock's sm_90 pass splits a 4-warp 128-row tile
between two 64-row consumer warp groups. In the second group it rewrites the epilogue's row
indices ``off_m + tl.arange(0, 128)`` as ``tt.make_range {start = 64}`` added to a splat of
``off_m + 64``: rows 128-191 of the tile instead of 64-127. A per-row vector loaded with them
(an fp8 GEMM's ``a_scale[:, None]``) scales the group's rows by the next tile's values:
relative error 0.29 on gemm_fp8_indesc t128x256 w4 under Triton 3.6 and 3.9
(benchmarks/results/2026-12-07-measured-space-h100), a kernel ptxas finds nothing wrong with.

The reading is textual and per partition region (SSA names repeat across regions): an
``arith.addi`` of a ``tt.make_range`` starting at S > 0 and a ``tt.splat`` of a value that is
itself ``X + S`` (S a constant of the region).
"""

from __future__ import annotations

import re

_PARTITION = re.compile(r"^\s*partition\d+\(", re.M)
_RANGE = re.compile(r"(%[\w.$-]+) = tt\.make_range \{[^}]*\bstart = (\d+) : i32")
_CONSTANT = re.compile(r"(%[\w.$-]+) = arith\.constant (?:\{[^}]*\} )?(-?\d+) : i\d+")
_ADD = re.compile(r"(%[\w.$-]+) = arith\.addi (%[\w.$-]+), (%[\w.$-]+)")
_SPLAT = re.compile(r"(%[\w.$-]+) = tt\.splat (%[\w.$-]+)")


def doubled_partition_offset(ttgir: str) -> str | None:
    """The defect above, named with its offset, or None."""
    starts = [m.start() for m in _PARTITION.finditer(ttgir)]
    for begin, end in zip(starts, starts[1:] + [len(ttgir)], strict=False):
        why = _in_region(ttgir[begin:end])
        if why:
            return why
    return None


def _in_region(text: str) -> str | None:
    ranges = {name: int(start) for name, start in _RANGE.findall(text)}
    constants = {name: int(value) for name, value in _CONSTANT.findall(text)}
    adds = {name: (a, b) for name, a, b in _ADD.findall(text)}
    splats = dict(_SPLAT.findall(text))
    for a, b in adds.values():
        for rng, other in ((a, b), (b, a)):
            start = ranges.get(rng, 0)
            base = adds.get(splats.get(other, ""))
            if start > 0 and base and start in (constants.get(base[0]), constants.get(base[1])):
                return (
                    f"stock's kernel: a consumer partition's rows start at {start} twice "
                    "(tt.make_range from the offset, added to a base that already adds it): "
                    "per-row data of another tile"
                )
    return None

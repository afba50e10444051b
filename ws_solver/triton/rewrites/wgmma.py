"""The sm_90 ops the post-pipeline rewrites (overlap.py, hopper.py) reason about."""

from __future__ import annotations

from ...ir import Op

DOT = "ttng.warp_group_dot"
WAIT = "ttng.warp_group_dot_wait"
ARRIVE = "ttng.arrive_barrier"
WAIT_BARRIER = "ttng.wait_barrier"


def is_async_dot(op: Op) -> bool:
    return op.name == DOT and bool(op.attr("isAsync", False))


def retires_all(op: Op) -> bool:
    """A synchronous wgmma waits for every group (Triton lowers it with wait_group 0)."""
    return op.name == DOT and not op.attr("isAsync", False)


def pendings(op: Op) -> int | None:
    """A `warp_group_dot_wait`'s `pendings` (wgmma groups it leaves in flight)."""
    value = op.attr("pendings")
    return value if isinstance(value, int) else None

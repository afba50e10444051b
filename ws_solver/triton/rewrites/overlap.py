"""Hopper (sm_90): let an asynchronous wgmma run under the work that does not need its result.

Triton 3.6's pipeliner makes a ``ttng.warp_group_dot`` asynchronous only when nothing in
its own iteration reads the result (the accumulator chain of a GEMM). Any other wgmma gets
a ``warp_group_dot_wait {pendings = 0}`` right after it, so it runs alone. A kernel that
computes next iteration's S = Q·Kᵀ ahead of this iteration's softmax (FlashAttention-3's
intra-warp-group overlap) then still waits for S before starting the softmax.

:func:`sink_wgmma_waits` moves each such wait down its block, to just before the first op
that needs it. A wait moved past *k* asynchronous wgmmas gets ``pendings + k``: wgmma
groups retire in the order they were committed, so it retires exactly the wgmmas it
retired before. The wait stops at the first op that

* reads one of its results or operands (the values it makes safe to use),
* is not on a short list of ops known to neither write shared memory nor arrive on a
  barrier (so every shared-memory write and stage release still sees the wgmmas in flight
  it saw before; ``ttng.wait_barrier`` is on the list: it only waits for a TMA load), or
* is another wait, a synchronous wgmma or the block's terminator.

A ``ttng.arrive_barrier`` on the way (in a warp-specialized consumer: the release of the
stage the retired wgmma read) moves down with the wait, right after it. A later release
only makes the producer wait longer, never races; but from then on a ``wait_barrier``
stops the wait too, since the producer may need the release to fill what it waits for, and
so does a wgmma, which would otherwise be in flight at the release.

With ``keep_releases`` a release stops the wait instead: no stage is released later than
Triton put it. The drop-in asks for that when the consumer's two warp groups release their
stages on their own (wgrelease.py). They then run out of phase, one warp group's softmax
under the other's wgmmas, and the intra-warp-group overlap adds little while the later
release holds the producer back. Measured on Triton 3.9 (H200, three runs each, same
binaries otherwise): the specialized ``ahead`` attention kernels ran 2.0-3.4% (d128) and
0.9-2.2% (causal d128) faster without the move, attention_bwd d128 0.2-1.9%, causal d128 s2
within its spread either way (``benchmarks/results/2026-12-02-overlap-releases``). Without the
per-warp-group release the move still pays (Triton's partition of the ahead kernel on 3.6:
507.8 against 459.8 TFLOP/s, ``2026-11-29-gpu-overlap-ws``). This choice is fitted on those
runs (in-sample); no other corpus kernel carries a release.

A wait is moved only when it passes tensor work (an op with a tensor result, or a wgmma):
moving it past scalar bookkeeping alone (the stage counters of an unspecialized GEMM) overlaps
nothing, and on Triton 3.9 those moves measured 2-5% slower on the H200 (gemm_tma,
gemm_cond_reset: ``benchmarks/results/2026-12-01-triton39-h200-run4``).

Under Triton 3.9 a kernel Triton did not warp-specialize keeps its waits
(``triton_releases.sinks_unspecialized_waits``, read by ``chain.post_pipeline``): there the
move ran 0.934x stock on the H100 where under 3.6 it ran 1.099x (attention_fwd_pointer d128
m128n128 w8 s3 ``ahead``, the move the only difference from stock's TTGIR).

The rewrite therefore never adds a hazard on shared memory; the registers of an in-flight
wgmma are ptxas's to protect (it serializes the wgmmas, with a warning, where it cannot).
That trust failed in one-warp-group kernels at ptxas's register cap: 4-warp attention d128
m128n64 with S ahead computed wrong O with the move (``chain.overlap_contained`` withholds
it from every one-warp-group kernel).

Not done, on purpose: splitting a wait so that a reader of only its older values goes
first (a ``pendings > 0`` wait for last iteration's P·V, the full one further down). It is
correct, but ptxas does not count wgmma groups across a loop's back edge and serializes
every wgmma of such a loop (C7514); the variant it accepts was slower than this one
(``benchmarks/results/2026-11-29-gpu-ttgir-variants/results.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import ir
from ...ir import Block, Module, Op
from ...ir.types import TENSOR
from .wgmma import ARRIVE, DOT, WAIT, WAIT_BARRIER, is_async_dot, pendings

# Ops a wait may move past: pure tensor arithmetic and layout changes, TMA-arrival waits,
# memdesc views and asynchronous wgmmas (which raise its pendings).
_PASSABLE_PREFIXES = ("arith.", "math.")
_PASSABLE = frozenset(
    {
        "tt.reduce",
        "tt.reduce.return",
        "tt.splat",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.make_range",
        "tt.reshape",
        "tt.trans",
        "tt.fp_to_fp",
        "tt.bitcast",
        "ttg.convert_layout",
        "ttg.memdesc_index",
        "ttg.memdesc_trans",
        "ttg.memdesc_subslice",
        "ttng.wait_barrier",
    }
)


@dataclass
class OverlapReport:
    """What :func:`sink_wgmma_waits_report` did."""

    sunk: int = 0  # waits moved later
    passed_ops: int = 0  # ops now overlapping an in-flight wgmma, summed over the moves
    carried_releases: int = 0  # arrive_barriers moved down with their wait
    held_by_release: int = 0  # waits a stage release kept from moving further (keep_releases)


def _passable(op: Op) -> bool:
    if is_async_dot(op):
        return True
    if op.name == "tt.reduce":
        return all(_passable(inner) for inner in op.walk() if inner is not op)
    if op.regions:
        return False
    return op.name.startswith(_PASSABLE_PREFIXES) or op.name in _PASSABLE


def _tensor_work(op: Op) -> bool:
    """An op a wgmma in flight can overlap with: one making a tensor, or another wgmma."""
    return is_async_dot(op) or any(r.type.kind == TENSOR for r in op.results)


def _reads_any(op: Op, values: set[int]) -> bool:
    return any(id(v) in values for inner in op.walk() for v in inner.operands)


@dataclass
class _Sink:
    target: int  # the wait goes just before the op at this position
    passed_dots: int  # asynchronous wgmmas it passes
    carried: list[Op]  # arrive_barriers that go down with it


def _sink_targets(block: Block, at: int) -> tuple[_Sink, _Sink | None]:
    """Where the wait at `at` can move to, and what it passes or carries on the way; and
    where it stops if it may not pass a stage release (None: it meets none)."""
    wait = block.ops[at]
    guarded = {id(v) for v in wait.results} | {id(v) for v in wait.operands}
    sink = _Sink(at + 1, 0, [])
    held = None
    while sink.target < len(block.ops):
        op = block.ops[sink.target]
        if _reads_any(op, guarded):
            break
        if op.name == ARRIVE and not op.regions:
            if held is None:
                held = _Sink(sink.target, sink.passed_dots, [])
            sink.carried.append(op)
        elif not _passable(op) or (sink.carried and (op.name == WAIT_BARRIER or op.name == DOT)):
            break
        elif is_async_dot(op):
            sink.passed_dots += 1
        sink.target += 1
    return sink, held


def _passed(block: Block, at: int, sink: _Sink) -> list[Op]:
    """The ops the wait at `at` would pass; none when the move is not worth making."""
    passed = [p for p in block.ops[at + 1 : sink.target] if p not in sink.carried]
    if sink.target >= len(block.ops) or not any(_tensor_work(p) for p in passed):
        return []
    return passed


def _sink_block(module: Module, block: Block, report: OverlapReport, keep_releases: bool) -> None:
    for at, op in enumerate(block.ops):
        if op.name != WAIT or pendings(op) is None:
            continue
        free, held = _sink_targets(block, at)
        sink = held if keep_releases and held is not None else free
        passed = _passed(block, at, sink)
        if sink is held and len(_passed(block, at, free)) > len(passed):
            report.held_by_release += 1
        if not passed:
            continue
        old, text = pendings(op), module.op_text(op)
        spelled = f"pendings = {old} : i32"
        if sink.passed_dots:
            if text.count(spelled) != 1:
                continue  # cannot re-count it safely: leave the wait where it is
            text = text.replace(spelled, f"pendings = {old + sink.passed_dots} : i32")
        anchor = block.ops[sink.target]
        module.move_before(op, anchor, text)
        for release in sink.carried:
            module.move_before(release, anchor)
        report.sunk += 1
        report.passed_ops += len(passed)
        report.carried_releases += len(sink.carried)


def sink_wgmma_waits_in(module: Module, keep_releases: bool = False) -> OverlapReport:
    """:func:`sink_wgmma_waits` on a parsed module, edited in place; what it did."""
    report = OverlapReport()
    blocks = [b for op in module.walk() for r in op.regions for b in r.blocks]
    for block in blocks:
        if any(is_async_dot(op) for op in block.ops):
            _sink_block(module, block, report, keep_releases)
    return report


def sink_wgmma_waits_report(text: str, keep_releases: bool = False) -> tuple[str, OverlapReport]:
    """:func:`sink_wgmma_waits` plus what it did."""
    if WAIT not in text:
        return text, OverlapReport()
    module = ir.parse(text)
    report = sink_wgmma_waits_in(module, keep_releases)
    return module.print(), report


def sink_wgmma_waits(text: str, keep_releases: bool = False) -> str:
    """Move each ``warp_group_dot_wait`` to just before the first op that needs it (with
    `keep_releases`: and never past a stage release)."""
    return sink_wgmma_waits_report(text, keep_releases)[0]

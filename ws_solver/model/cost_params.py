"""The cost model's constants: what is not a hardware rate (those live in `Target.rates`).

The calibrated numbers are here: `register_scale_percent` and the three stall terms are
fitted by `benchmarks/analysis/calibrate.py` on H200 measurements (it prints a `CostParams(...)` to
paste); the rest are modeling estimates. The one number that depends on the Triton release
(its ptxas), the register percent of a partition under a setmaxnreg cap, is in that
release's row of lowering_facts.py (`capped_register_scale_percent`). `cost_table` turns
them, with a LoopGraph and a Target, into the per-node and per-channel coefficients
`evaluate` and the CP-SAT model share.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CostParams:
    """Modeling constants that are not hardware rates (those live in Target.rates)."""

    # Cycles a partition spends issuing one asynchronous op (a TMA copy or a tcgen05/wgmma
    # MMA) with its barrier bookkeeping; single-thread issue, so it does not scale with warps.
    async_issue_cycles: int = 16
    # Busy cycles per side for one channel hand-off per iteration (mbarrier arrive or wait
    # plus phase tracking), on top of the hand-off latency in Rates.sync_latency_cycles.
    channel_sync_cycles: int = 8
    # Cycles for one scalar/index op or a region op's control flow.
    scalar_cycles: int = 2
    # Round-trip latency of a tile load from global memory (L2 miss), in cycles. An estimate
    # (~440 ns at 1.83 GHz) until calibrated on the H200; used only for latency bounds.
    load_latency_cycles: int = 800
    # Registers per thread every partition needs besides its tensors (indices, addresses,
    # loop control, predicates).
    base_registers: int = 24
    # The constants below are fitted by benchmarks/analysis/calibrate.py on the H200 measurements in
    # the run folders of benchmarks/results (it prints them; the values here are its output).
    # ptxas holds more than the tensors the model counts (an op's operands next to its result,
    # wgmma fragments, addresses): tensor bytes count at this percent, the least that covers
    # ptxas's registers on every unspecialized kernel that did not spill.
    register_scale_percent: int = 139
    # Stalls added to II (cycles per iteration), for sm_90's wgmma (`wgmma_stalls`): warp
    # groups of one partition issue their wgmmas together, so when two or more of them also
    # wait on the stage barriers of their own loads, the stage is released (and the next TMA
    # issued) only when the slowest group gets there: specialized 8-warp GEMMs ran 5-20%
    # faster than unspecialized ones.
    wgmma_shared_stall_cycles: int = 170
    # The shared stall is not paid by a wgmma whose result only the next iteration reads (a
    # GEMM's accumulator chain) when one stage feeds it more K than this many bytes per
    # operand row (K x element bytes; `mma_stalls.stalling_wgmmas`): on the H200 sweep of
    # Triton 3.6 (benchmarks/results/2026-12-04-configspace-h200/decision-analysis.md),
    # unspecialized 8-warp GEMMs with 256-byte rows (fp16, BLOCK_K 128: two 128-byte swizzled
    # rows, 8 wgmma K-steps a stage) ran at the TMA rate and 1-12% faster than specialized
    # (15 of 15 configs), non-persistent ones with 128- or 64-byte rows (fp16 BLOCK_K 64, fp8)
    # 10-36% slower (15 of 15). One swizzled row: a boundary the data bracket, not a fitted
    # value.
    wgmma_stall_max_k_bytes: int = 128
    # One warp group issuing the wgmma waits on every hand-off from another partition (a
    # stage loaded there, values computed there) and releases a stage only once its wgmma
    # retired (the Hopper fix); no second group's wgmma covers the wait: 4-warp GEMMs ran
    # 4-7% slower specialized.
    wgmma_lone_stall_cycles: int = 71
    # A specialized kernel takes the whole register file (setmaxnreg shares it out), so a
    # loop whose unspecialized kernel fits two CTAs per SM (`single_partition_ctas`) gives up
    # the second CTA, which hid the first one's waits: attention d64 (4 or 8 warps) and the
    # grouped GEMMs ran 11-21% slower specialized.
    lost_occupancy_cycles: int = 212
    # An unspecialized kernel whose registers exceed what ptxas may give a thread spills, and
    # on sm_90 ptxas then serializes its wgmmas (its C7511 note): II grows by this percent.
    # Not fitted here: the lower end of the 4.5-7.3x losses measured on the H200 for 12 such
    # 4-warp 128x256 GEMM configs (issue 34); any value above ~100% makes the same decisions
    # on them, since a specialized plan that fits is never that much slower.
    spill_slowdown_percent: int = 350
    # sm_100 only (a tcgen05 MMA; sm_90 has none): a partition that issues a tcgen05 MMA and
    # the TMA loads of its operands runs them in one instruction stream: it waits on a stage's
    # load barrier, issues the MMA, waits for the MMA's commit before it refills that stage,
    # and the tensor core idles across each wait (JAX's Blackwell matmul guide, step 0: "issues
    # the MMA and waits for the previous one"). A load partition and an MMA partition overlap
    # these waits. Not fitted: one mbarrier hand-off (Rates.sync_latency_cycles, 70, Hopper's
    # [MEAS]) plus issuing one load and one MMA (2 x async_issue_cycles) = 102. Checked against
    # the published sm_100 pairs (docs/blackwell-evidence.md), with the model's per-K-step II
    # at 62 B/clk of TMA: it predicts +19% for JAX step 1 over step 0 (measured +21%; a fit
    # there alone gives 111) and +13% for Gluon 08 over 07 (measured +6.5-22%, median fit 122).
    # Unmeasured here: there is no Blackwell GPU in this project.
    tcgen05_serial_stall_cycles: int = 102
    # Objective = II * ii_weight + tie-break; ii_weight exceeds any tie-break (36 bits), which
    # `evaluate` checks. It is exact at any II (a Python int); CP-SAT reports objectives as
    # doubles, exact below 2**53, so its tie-break phase minimizes the excess over the proven
    # II (encode.solve.search).
    ii_weight: int = 1 << 36


PARAMS = CostParams()

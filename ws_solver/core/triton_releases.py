"""The Triton releases ws_solver supports: one row per release, every difference between
them a named flag. The model reads the lowering rules (`model/lowering_facts.py`,
`model/lowering.py`), the drop-in the head and tail of ``make_ttgir``
(`triton/toolchain/versions.py`); both read this one table.

Two lowering entries are about speed and registers, not legality: `pipelines_wgmma_chains`,
read by the cost table, and `capped_register_scale_percent`, a fact of the ptxas each
release ships, read by `resources.registers_needed`. The rules, their evidence and the
probes behind each flag are in docs/triton-lowering-rules.md ("Triton 3.9.0").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

DEFAULT_TRITON = "3.6.0"


@dataclass(frozen=True)
class TritonRelease:
    """What differs between Triton releases, for the model and for the drop-in."""

    version: str  # "3.6.0"
    # -- lowering rules (the model) --
    # R1 (sm_90): a wgmma reading shared memory allocated before the loop hangs `pipeline`
    # outside the default region (3.6; 3.9's pipeliner returns).
    hoisted_wgmma_hangs: bool
    # R3: a pointer tt.load's tensor cannot cross partitions (3.6's NVWSInsertAref has no
    # cp.async path; 3.9's has).
    pointer_load_data_stays: bool
    # R4 (sm_100), a TMEM access in an scf.if away from its MMA: 3.6 wants the MMA in
    # partition 1 and the if's body in partition 0; 3.9 the reverse order, the MMA's
    # partition before the if's (the if's body in one partition after the MMA's).
    mma_before_tmem_if: bool
    # sm_100: a plan whose partition 0 holds a TMA load or an MMA gets an empty default
    # partition inserted in front by Triton (the plan's ids shift by one, its register
    # requests are not applied; found by moving single ops of annotated corpus loops and
    # reading the IR after partition scheduling). The model forbids it (`lowering.issuers`),
    # and widens R7: a TMEM buffer's MMA and its tmem_loads run apart (`lowering.tmem_apart`).
    inserts_default_partition: bool
    # R13 (sm_100): a tt.reduce outside the default region fails PartitionScheduling (3.9).
    reduce_in_default: bool
    # R10 (sm_100): one TMEM buffer's tmem_loads and tmem_stores run in one partition, and
    # with its MMAs span at most two. Strict on 3.9 (0 of 178 single moves breaking it
    # lowered); on 3.6 32 of 108 lowered, and it is not enforced there.
    tmem_accesses_together: bool
    # sm_90, speed rather than legality: an unspecialized loop whose wgmma results are read
    # only in later iterations (a GEMM's accumulator chain) already runs at cuBLAS speed
    # (3.9: 0.99-1.00x; 3.6: 0.84-0.88x), so the shared wgmma stall (`cost.wgmma_stalls`)
    # is paid only where a wgmma's result is read in the iteration that issues it.
    pipelines_wgmma_chains: bool
    # Registers, not legality: on sm_90 (wgmma accumulators in registers), the percent at
    # which a partition's tensor bytes count when it runs under a setmaxnreg cap
    # (CostParams.register_scale_percent is the unspecialized kernel's, where ptxas may take
    # up to 255 and does). Compile-time probe (benchmarks/results/2026-12-02-register-caps):
    # 3.9's ptxas 13.4 fits attention's and the GEMMs' consumers in 94-112% of their tensor
    # bytes; 108 is the least that covers the widest (`ahead` attention at 240). Not a bound
    # for every loop: attention_bwd's consumer spills 8 B at 240 (it holds several
    # transients at once), and that split still ran 1.076x faster than unspecialized
    # (2026-12-02-capped-scale-h200). 3.6's ptxas 12.8 spills the `ahead` consumer at 240, so 3.6
    # keeps the unspecialized percent (None); so does sm_100, whose correction partitions
    # spilled more at the lower requests.
    capped_register_scale_percent: int | None
    # -- make_ttgir (the drop-in) --
    # Head: 3.6 plans CTA layouts in one pass (plan_cta); 3.9 assigns CGA layouts, then
    # optimizes CTA locality (two passes with a layout cleanup between) and checks 2-CTA MMAs.
    cga_layouts: bool
    # Head: 3.9 can convert persistent kernels to cluster launch control (the ``clc`` option).
    clc: bool
    # Tail: 3.6 runs prefetch on every target, 3.9 on sm_80 only (so never on ours); 3.9 also
    # reduces TMEM loads, lowers cluster launch control on sm_100 and hoists mbarrier
    # init/inval out of loops.
    prefetch: bool
    tmem_load_reduce: bool
    lower_clc: bool
    hoist_mbarrier_lifecycle: bool
    # sm_90 rewrites: ws_solver's wgmma wait sinking (rewrites/overlap.py) in a kernel Triton
    # did not warp-specialize. The one config of the H100 sweeps where it is the only
    # difference from stock's TTGIR, attention_fwd_pointer d128 m128n128 w8 s3 `ahead`, ran
    # 1.099x stock under 3.6 and 0.934x under 3.9 (2026-12-07-measured-timer-h100 and its
    # -triton39 half); no 3.9 measurement shows it winning in an unspecialized kernel, so 3.9
    # leaves stock's waits there (the kernel is then stock's own).
    sinks_unspecialized_waits: bool
    # The corpus folder holding this release's TTGIR at the partitioner input point.
    corpus_dir: str

    @property
    def name(self) -> str:
        """The release, as the drop-in names it ("3.6.0")."""
        return self.version

    @property
    def short(self) -> str:
        """How rule messages name the release: "3.6", "3.9"."""
        return ".".join(self.version.split(".")[:2])

    def extra_default_partition(self, capability: int) -> int:
        """How many partitions Triton adds in front of a plan whose partition 0 holds a TMA
        load or an MMA (0 or 1)."""
        return int(self.inserts_default_partition and capability >= 100)


RELEASES: Mapping[str, TritonRelease] = MappingProxyType(
    {
        "3.6.0": TritonRelease(
            version="3.6.0",
            hoisted_wgmma_hangs=True,
            pointer_load_data_stays=True,
            mma_before_tmem_if=False,
            inserts_default_partition=False,
            reduce_in_default=False,
            tmem_accesses_together=False,
            pipelines_wgmma_chains=False,
            capped_register_scale_percent=None,
            cga_layouts=False,
            clc=False,
            prefetch=True,
            tmem_load_reduce=False,
            lower_clc=False,
            hoist_mbarrier_lifecycle=False,
            sinks_unspecialized_waits=True,
            corpus_dir="ttgir",
        ),
        "3.9.0": TritonRelease(
            version="3.9.0",
            hoisted_wgmma_hangs=False,
            pointer_load_data_stays=False,
            mma_before_tmem_if=True,
            inserts_default_partition=True,
            reduce_in_default=True,
            tmem_accesses_together=True,
            pipelines_wgmma_chains=True,
            capped_register_scale_percent=108,
            cga_layouts=True,
            clc=True,
            prefetch=False,
            tmem_load_reduce=True,
            lower_clc=True,
            hoist_mbarrier_lifecycle=True,
            sinks_unspecialized_waits=False,
            corpus_dir="ttgir-3.9",
        ),
    }
)


def release_of(version: str) -> str:
    """The release a Triton version string names: "3.9.0" for "3.9.0+git1234"."""
    return str(version).strip().split("+", 1)[0]


def find_release(version: str) -> TritonRelease | None:
    """The row of ``version`` ("3.9.0", or a build such as "3.9.0+git..."), else None."""
    return RELEASES.get(release_of(version))


def supported_names() -> str:
    """The supported releases, as error messages list them: "3.6.0, 3.9.0"."""
    return ", ".join(RELEASES)

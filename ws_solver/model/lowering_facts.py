"""What each supported Triton release's warp-specialization lowering accepts: one row per
version, each difference a named flag that `lowering.py` reads (one home for the model; the
drop-in's `ws_solver/triton/toolchain/versions.py` reads `inserts_default_partition` from here). Two
entries are about speed and registers, not legality: `pipelines_wgmma_chains`, read by the
cost table, and `capped_register_scale_percent`, a fact of the ptxas each release ships,
read by `resources.registers_needed`.

The rules themselves, their evidence and the probes behind each flag are in
docs/triton-lowering-rules.md ("Triton 3.9.0"). A version not in the table is refused with
one line naming the supported ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

DEFAULT_TRITON = "3.6.0"


@dataclass(frozen=True)
class LoweringFacts:
    """The lowering rules that differ between Triton releases, as flags."""

    version: str  # "3.6.0"
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
    # requests are not applied). The model forbids it (`lowering.issuers`), and widens R7:
    # a TMEM buffer's MMA and its tmem_loads run apart (`lowering.tmem_apart`).
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

    @property
    def short(self) -> str:
        """How rule messages name the release: "3.6", "3.9"."""
        return ".".join(self.version.split(".")[:2])


LOWERING: Mapping[str, LoweringFacts] = MappingProxyType(
    {
        "3.6.0": LoweringFacts(
            version="3.6.0",
            hoisted_wgmma_hangs=True,
            pointer_load_data_stays=True,
            mma_before_tmem_if=False,
            inserts_default_partition=False,
            reduce_in_default=False,
            tmem_accesses_together=False,
            pipelines_wgmma_chains=False,
            capped_register_scale_percent=None,
        ),
        "3.9.0": LoweringFacts(
            version="3.9.0",
            hoisted_wgmma_hangs=False,
            pointer_load_data_stays=False,
            mma_before_tmem_if=True,
            inserts_default_partition=True,
            reduce_in_default=True,
            tmem_accesses_together=True,
            pipelines_wgmma_chains=True,
            capped_register_scale_percent=108,
        ),
    }
)


def release_of(version: str) -> str:
    """The release a Triton version string names: "3.9.0" for "3.9.0+git1234"."""
    return str(version).strip().split("+", 1)[0]


def lowering_facts(version: str) -> LoweringFacts:
    """The row of ``version`` ("3.9.0", or a build such as "3.9.0+git..."); ValueError,
    one line naming the supported versions, for any other."""
    release = release_of(version)
    if release not in LOWERING:
        raise ValueError(
            f"Triton {version}: no lowering rules for it (supported: {', '.join(LOWERING)})"
        )
    return LOWERING[release]

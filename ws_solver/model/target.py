"""Hardware targets for the warp-specialization model.

A ``Target`` describes one GPU architecture the partitioner plans for. Its limits (register
file, ``setmaxnreg`` range, warps per CTA, partitions, shared memory, barriers, tensor memory)
are hard constraints of the CP-SAT model: a plan that breaks one is infeasible, never merely
slower. Its ``Rates`` feed the cost model, which turns the work of each partition into cycles
of a modeled steady-state iteration. Every figure is per SM or per CTA; warp-specialized
kernels are assumed to run one CTA per SM (the CTA owns the whole register file, shared memory
and tensor memory), so the two coincide. Each number carries its source in a comment next to
it; derived numbers show their arithmetic, and numbers that are modeling choices say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType

from .lowering_facts import DEFAULT_TRITON, LOWERING, LoweringFacts, lowering_facts

# Sources cited below by tag:
#
# - [PTX] NVIDIA PTX ISA: ``setmaxnreg``; ``mbarrier``; ``bar.sync``/``barrier``; Tensor Memory
#   and ``tcgen05.alloc`` (sm_100a).
# - [CUDA-PG] CUDA C++ Programming Guide: "Compute Capabilities" feature/specification table
#   (cc 9.0 and 10.0) and "Arithmetic Instructions" throughput table (results per clock per SM).
# - [H100-WP] NVIDIA H100 Tensor Core GPU Architecture whitepaper (SXM5: 132 SMs, tensor-core
#   boost clock 1830 MHz, 1980 MHz for the non-tensor datapaths, per-SM tensor rate twice
#   A100's clock for clock, four SM sub-partitions each with one warp scheduler).
# - [H200-DS] NVIDIA H200 datasheet (same GH100 SMs and clocks as H100 SXM; 4.8 TB/s HBM3e).
# - [B200-DS] NVIDIA HGX B200 datasheet, per-GPU figures (dense = half of the sparse figures);
#   148 SMs (Chips and Cheese, "Nvidia's B200: Keeping the CUDA Juggernaut Rolling").
# - [FA3] Shah et al., "FlashAttention-3" (2024): producer/consumer ``setmaxnreg`` 24/240
#   (two consumer warp groups) and 32/160 (three); H100 SXM5 has 989 TFLOPS of FP16 matmul but
#   3.9 TFLOPS of special functions.
# - [FA4] Together AI blog, "FlashAttention-4": from H100 to B200 the tensor-core rate
#   doubles per SM while MUFU (16 ops/clk/SM) and shared memory (128 B/clk/SM) stay the same.
# - [CUTLASS] CUTLASS sm90 warp-specialized GEMM kernels: producer 40, consumers 232 registers.
# - [MEAS] Measured by us on one H200 (Triton 3.6 machine), 2026-11-29, with a throwaway CUDA
#   probe (not in the repo) timed by ``clock64``, so in SM cycles whatever the clock speed:
#   ``cp.async.bulk`` (the TMA engine) global->shared, one CTA per SM, one issuing thread,
#   6 x 32 KiB in flight: 35.1 B/clk/SM when the source is L2-resident (16 and 32 MiB),
#   57.1 B/clk/SM when all 132 SMs read the same 1 MiB, 17.8 B/clk/SM streaming 4 GiB from
#   HBM (4.63 TB/s, 96% of 4.8). mbarrier ping-pong between two 128-thread warp groups of one
#   CTA: 70 cycles per hand-off (arrive by 1 or by all 128 threads: same). cuBLAS 8192^3 fp16
#   GEMM in the same sitting: 656 TFLOP/s.

__all__ = [
    "MMA_ELEMENT_TYPES",
    "SM90",
    "SM100",
    "TARGETS",
    "Rates",
    "Target",
    "target_for",
]

# Operand element types the cost model knows MMA rates for, spelled as in TTGIR tensor types.
# "f32" means fp32 operands, which the tensor cores run as tf32.
MMA_ELEMENT_TYPES: tuple[str, ...] = ("f16", "bf16", "f8E4M3FN", "f8E5M2", "f32", "i8")


def _frozen_mapping(values: Mapping[str, int]) -> Mapping[str, int]:
    """A read-only copy, so that mutating the caller's dict cannot change a Target."""
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class Rates:
    """Per-SM throughputs and latencies the cost model uses, in SM clock cycles."""

    # Dense tensor-core FLOP per cycle per SM (an FMA counts 2), keyed by operand element type.
    mma_flops_per_cycle: Mapping[str, int]
    # Bytes per cycle one SM's TMA loads get from L2/HBM in the steady state of a tiled loop.
    tma_bytes_per_cycle: int
    # MUFU (ex2, rcp, rsqrt, lg2, sin, cos) results per cycle per SM.
    sfu_ops_per_cycle: int
    # fp32 add/mul/fma lanes per SM, i.e. results per cycle per SM.
    alu_ops_per_cycle: int
    # Warp instructions issued per cycle by one warp scheduler (an SM has four).
    issue_slots_per_cycle: int
    # Cycles from an mbarrier arrive in one warp group to the waiting warp group running on.
    sync_latency_cycles: int
    # Shared-memory bytes per cycle per SM.
    smem_bytes_per_cycle: int
    # Clock (GHz) used to turn modeled cycles into time; the one the datasheet peaks assume.
    clock_ghz: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mma_flops_per_cycle", _frozen_mapping(self.mma_flops_per_cycle))
        missing = [t for t in MMA_ELEMENT_TYPES if t not in self.mma_flops_per_cycle]
        if missing:
            raise ValueError(f"mma_flops_per_cycle lacks element types {missing}")
        for elem, rate in self.mma_flops_per_cycle.items():
            if rate <= 0:
                raise ValueError(f"mma_flops_per_cycle[{elem!r}] must be positive, got {rate}")
        for name in (
            "tma_bytes_per_cycle",
            "sfu_ops_per_cycle",
            "alu_ops_per_cycle",
            "issue_slots_per_cycle",
            "sync_latency_cycles",
            "smem_bytes_per_cycle",
            "clock_ghz",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")

    def __reduce__(self) -> tuple:
        # A mapping proxy does not pickle: send a plain dict (frozen again by __post_init__),
        # so that a Target can go to a worker process as it is.
        values = [getattr(self, f.name) for f in fields(self)]
        return (Rates, tuple(dict(v) if isinstance(v, Mapping) else v for v in values))

    def __hash__(self) -> int:
        # The generated hash would fail on the mapping proxy; hash its sorted items instead.
        return hash(
            (
                tuple(sorted(self.mma_flops_per_cycle.items())),
                self.tma_bytes_per_cycle,
                self.sfu_ops_per_cycle,
                self.alu_ops_per_cycle,
                self.issue_slots_per_cycle,
                self.sync_latency_cycles,
                self.smem_bytes_per_cycle,
                self.clock_ghz,
            )
        )


@dataclass(frozen=True)
class Target:
    """Hard limits of one architecture (per CTA, one CTA per SM) plus its cost-model rates."""

    name: str
    capability: int
    rates: Rates
    # 64K 32-bit registers per SM, and at most 64K per thread block [CUDA-PG, cc 9.0 and 10.0].
    registers_per_sm: int = 65_536
    # setmaxnreg imm-reg-count: 24..256 inclusive, multiple of 8; executed by every warp of a
    # warp group, and all warp groups draw from one per-CTA pool [PTX setmaxnreg].
    # Anchors: FA3 producer 24 + two consumers 240 (24+240+240 = 504 <= 512 = 65,536/128),
    # or producer 32 + three consumers 160 (32+3*160 = 512) [FA3]; CUTLASS 40 + 232 + 232
    # [CUTLASS]. (Without setmaxnreg ptxas caps a thread at 255 registers [CUDA-PG].)
    setmaxnreg_min: int = 24
    setmaxnreg_max: int = 256
    setmaxnreg_step: int = 8
    # Without setmaxnreg ptxas gives a thread at most 255 registers [CUDA-PG]; more spills.
    max_registers_per_thread: int = 255
    # A warp group is 4 consecutive warps (wgmma, setmaxnreg and TMEM access work on it) [PTX].
    warps_per_group: int = 4
    threads_per_warp: int = 32  # [CUDA-PG]
    # 1024 threads per block = 32 warps [CUDA-PG, cc 9.0 and 10.0].
    max_warps_per_cta: int = 32
    # Triton forces power-of-two warp counts (and pads partitions to whole warp groups) [design
    # doc "Targets"; triton-3.6-facts.md, ``num_warps(W)`` of each partition region].
    allowed_partition_warps: tuple[int, ...] = (1, 2, 4, 8)
    # Model bound, not hardware: see SM90 / SM100 below for the value chosen and why.
    max_partitions: int = 4
    # 227 KiB = 232,448 B of shared memory per block (opt-in maximum), 228 KiB per SM minus
    # 1 KiB the system reserves per block; same figure for cc 9.0 and cc 10.0 [CUDA-PG].
    shared_memory_per_cta: int = 232_448
    # 228 KiB of shared memory per SM, 1 KiB of it reserved per resident block, and 64 warps
    # per SM [CUDA-PG, cc 9.0 and 10.0]: with the register file, they bound how many CTAs of
    # an unspecialized kernel share an SM.
    shared_memory_per_sm: int = 233_472
    reserved_shared_memory_per_cta: int = 1_024
    max_warps_per_sm: int = 64
    # Named barriers 0..15 for bar.sync/bar.arrive per CTA [PTX barrier; CUDA-PG].
    named_barriers: int = 16
    # Model limit, not hardware: an mbarrier is just 8 B of shared memory, so the hardware
    # bound is shared memory (the shared-memory model leaves them out: 512 B at 64, 2 KiB at
    # sm_100's 256). 64 = e.g. 8 channels x depth 4 x (full + empty); keeps the channel
    # search small. Raise it where a real loop needs more (sm_100 does).
    max_mbarriers: int = 64
    # Tensor memory: 128 lanes x 512 columns of 32-bit cells per CTA; allocated in columns,
    # a power of two >= 32 [PTX tcgen05.alloc]. 0 columns = no tensor memory (sm_90).
    tmem_columns: int = 0
    tmem_lanes: int = 128
    tmem_min_alloc_columns: int = 32
    # True: the MMA accumulator lives in the issuing warp group's registers (wgmma).
    # False: it lives in tensor memory (tcgen05.mma) [PTX].
    mma_accumulator_in_registers: bool = True
    # Warps that must run an MMA: a whole warp group for wgmma, one thread (so one warp) for
    # tcgen05.mma [PTX].
    mma_issue_warps: int = 4
    # Warps needed to read a full 128-lane TMEM tile: warp i of a warp group reaches only
    # lanes 32*i .. 32*i+31, so a full warp group [PTX tcgen05 data movement]. 0: no TMEM.
    tmem_reader_warps: int = 0
    # Whether this target's rates were checked against kernels timed on its silicon. Where
    # not, the drop-in does not reverse stock Triton's decision to specialize a loop without
    # evidence (model/decision.py `reversal`).
    measured: bool = True
    # The Triton release whose lowering rules plans must follow (model/lowering_facts.py).
    triton: LoweringFacts = LOWERING[DEFAULT_TRITON]

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed_partition_warps", tuple(self.allowed_partition_warps))
        if self.setmaxnreg_min % self.setmaxnreg_step or self.setmaxnreg_max % self.setmaxnreg_step:
            raise ValueError("setmaxnreg bounds must be multiples of setmaxnreg_step")
        if not 0 < self.setmaxnreg_min <= self.setmaxnreg_max:
            raise ValueError("need 0 < setmaxnreg_min <= setmaxnreg_max")
        warps = self.allowed_partition_warps
        if not warps or list(warps) != sorted(set(warps)) or warps[0] <= 0:
            raise ValueError("allowed_partition_warps must be strictly increasing positive ints")
        if warps[-1] > self.max_warps_per_cta:
            raise ValueError("a partition cannot have more warps than a CTA")
        if self.max_partitions < 1:
            raise ValueError("max_partitions must be >= 1")
        if self.tmem_columns:
            if self.tmem_columns & (self.tmem_columns - 1):
                raise ValueError("tmem_columns must be a power of two")
            if self.tmem_reader_warps <= 0:
                raise ValueError("a target with tensor memory needs tmem_reader_warps > 0")

    @property
    def has_tmem(self) -> bool:
        return self.tmem_columns > 0

    def for_triton(self, version: str | None) -> Target:
        """This target under the lowering rules of Triton ``version`` (None: 3.6.0)."""
        facts = lowering_facts(version or DEFAULT_TRITON)
        return self if facts == self.triton else replace(self, triton=facts)

    @property
    def threads_per_group(self) -> int:
        return self.warps_per_group * self.threads_per_warp

    def setmaxnreg_values(self) -> tuple[int, ...]:
        """Every legal ``setmaxnreg`` register count, ascending (24, 32, ..., 256)."""
        return tuple(range(self.setmaxnreg_min, self.setmaxnreg_max + 1, self.setmaxnreg_step))

    def setmaxnreg_for(self, registers: int) -> int:
        """The legal ``setmaxnreg`` count closest to `registers` from above: rounded up to the
        step, within the range."""
        step = self.setmaxnreg_step
        rounded = -(-registers // step) * step
        return min(self.setmaxnreg_max, max(self.setmaxnreg_min, rounded))

    def registers_fit(self, partitions: Iterable[tuple[int, int]]) -> bool:
        """Whether partitions given as ``(warps, registers_per_thread)`` fit the register file.

        The register budget is hard (over-subscribing it is a cliff, not a slope): the sum of
        ``threads_per_warp * warps * registers`` must not exceed ``registers_per_sm``. Each
        register count must be a legal ``setmaxnreg`` value.
        """
        legal = set(self.setmaxnreg_values())
        total = 0
        for warps, regs in partitions:
            if warps <= 0:
                raise ValueError(f"a partition needs at least one warp, got {warps}")
            if regs not in legal:
                raise ValueError(f"{regs} is not a legal setmaxnreg value for {self.name}")
            total += self.threads_per_warp * warps * regs
        return total <= self.registers_per_sm

    def max_regs_per_thread_for(self, total_warps: int) -> int:
        """Largest legal ``setmaxnreg`` value every thread of a CTA with ``total_warps`` can have.

        Warps are padded up to whole warp groups first (Triton pads partitions that way and
        ``setmaxnreg`` acts per warp group). E.g. 8 warps -> 256, 12 -> 168, 32 -> 64.
        """
        if not 1 <= total_warps <= self.max_warps_per_cta:
            raise ValueError(
                f"total_warps must be in 1..{self.max_warps_per_cta}, got {total_warps}"
            )
        groups = -(-total_warps // self.warps_per_group)
        per_thread = self.registers_per_sm // (groups * self.threads_per_group)
        regs = min(self.setmaxnreg_max, per_thread - per_thread % self.setmaxnreg_step)
        if regs < self.setmaxnreg_min:
            raise ValueError(f"{total_warps} warps leave fewer than {self.setmaxnreg_min} regs")
        return regs

    def register_budget(self, total_warps: int) -> int:
        """Registers Triton's warp-group allocation (`AllocateWarpGroups`) can share out in a
        specialized kernel of ``total_warps`` warps: every thread's even share of the file,
        rounded down to a setmaxnreg step, times the threads; not always the whole file
        (20 warps: 96 x 640 = 61,440). The default region gets what the other regions'
        setmaxnreg values leave of it; below 24, Triton emits no setmaxnreg at all."""
        groups = -(-total_warps // self.warps_per_group)
        return self.max_regs_per_thread_for(total_warps) * groups * self.threads_per_group

    def blocks_by_shared_memory(self, shared_bytes: int) -> int:
        """Blocks of ``shared_bytes`` each that an SM's shared memory holds at once (each
        also takes the block's reserved KiB)."""
        return self.shared_memory_per_sm // (shared_bytes + self.reserved_shared_memory_per_cta)

    def tmem_alloc_columns(self, columns: int) -> int:
        """Columns a tensor-memory allocation of ``columns`` really takes (power of two >= 32)."""
        if not self.has_tmem:
            raise ValueError(f"{self.name} has no tensor memory")
        if not 1 <= columns <= self.tmem_columns:
            raise ValueError(f"TMEM allocation must be 1..{self.tmem_columns} columns")
        return max(self.tmem_min_alloc_columns, 1 << (columns - 1).bit_length())


def _mma_rates(f16: int) -> Mapping[str, int]:
    """Tensor-core FLOP per cycle per SM by element type, from the fp16 rate: bf16 the same,
    fp8 and int8 twice it, tf32 half of it (as on both sm_90 and sm_100, [H100-WP], [B200-DS])."""
    return MappingProxyType(
        {
            "f16": f16,
            "bf16": f16,
            "f8E4M3FN": 2 * f16,
            "f8E5M2": 2 * f16,
            "f32": f16 // 2,  # tf32
            "i8": 2 * f16,  # int8 ops
        }
    )


# ---------------------------------------------------------------------------------------------
# Hopper, sm_90 (figures for the H200 SXM we measure on; H100 SXM differs only in HBM).
# ---------------------------------------------------------------------------------------------
SM90 = Target(
    name="sm_90",
    capability=90,
    rates=Rates(
        # [H100-WP]: twice A100's per-SM MMA rate clock for clock; A100's SM does 1024 dense fp16
        # FMA/clk = 2048 FLOP/clk (A100 whitepaper), so 4096. Check against [H200-DS] 989.4 dense
        # fp16 TFLOPS (1979 with sparsity): 132 SMs * 4096 * 1.83 GHz = 989.4e12. fp8 and int8
        # double fp16 (3958 TFLOPS / TOPS dense); tf32 halves it (494.7 TFLOPS dense).
        mma_flops_per_cycle=_mma_rates(4096),
        # HBM alone: 4.8e12 B/s / 132 SMs / 1.83e9 Hz = 19.9 B/clk/SM [H200-DS]; 17.8 measured
        # [MEAS]. L2 reuse makes a tiled loop's figure higher: 35.1 B/clk/SM measured from L2,
        # 57.1 when all SMs read the same tiles [MEAS]. Chosen: 90% L2 hits, typical of a
        # rasterized tiled GEMM, 1 / (0.9/35.1 + 0.1/17.8) = 32.0. (A 128x256 fp16 GEMM tile
        # needs (128+256)*64*2 B per 2*128*256*64/4096 = 1024 cycles = 48 B/clk to keep the tensor
        # cores busy, so at 32 it is L2-bound at 2/3 of peak, 659 TFLOP/s at 1.83 GHz; cuBLAS
        # measured 656 in the same sitting [MEAS].)
        tma_bytes_per_cycle=32,
        # [CUDA-PG] arithmetic throughput, cc 9.0: 16 results/clk/SM for ex2/lg2/rcp/rsqrt/sin/cos.
        # Check [FA3]: 3.9e12 / (132 * 1.83e9) = 16.1.
        sfu_ops_per_cycle=16,
        # [CUDA-PG] cc 9.0: 128 fp32 add/mul/fma results/clk/SM. Check [H100-WP]: 66.9 fp32 TFLOPS
        # = 132 SMs * 128 * 2 FLOP * 1.98 GHz.
        alu_ops_per_cycle=128,
        # [H100-WP]: 4 sub-partitions per SM, each scheduler issues one warp instruction per clock.
        issue_slots_per_cycle=1,
        # [MEAS]: 70 cycles per mbarrier hand-off between two warp groups of one CTA (69.6-70.1).
        sync_latency_cycles=70,
        # [CUDA-PG]: 32 banks x 4 B per clock = 128 B/clk/SM; [FA4] quotes the same 128 B/clk/SM.
        smem_bytes_per_cycle=128,
        # [H100-WP] tensor-core boost clock 1830 MHz (989.4e12 / (132 * 4096) = 1.830e9); the
        # non-tensor datapaths boost to 1980 MHz (the H200 sat there during our bandwidth probes
        # [MEAS]), but the datasheet tensor peaks - and hence our MMA rate - assume 1.83 GHz.
        clock_ghz=1.83,
    ),
    # 4 partitions: default/compute, load, MMA consumer(s), store/epilogue - the roles of the
    # heuristic partitioner and of FA3 (1 producer + 2 consumer groups) or CUTLASS ping-pong. wgmma
    # keeps its accumulator in registers (a 128x128 fp32 tile over 4 warps is 128 regs/thread
    # alone) and all groups share 65,536 / 128 = 512 registers per thread-slot, so at most
    # three register-heavy groups fit next to a 24-register producer; a fifth partition could
    # only be a near-register-free helper. Model bound, not hardware.
    max_partitions=4,
    # wgmma, no tensor memory: the accumulator in registers, a warp group to issue an MMA
    # (Target's defaults).
)

# ---------------------------------------------------------------------------------------------
# Blackwell, sm_100 (B200). Not measured by us: numbers are datasheet-derived.
# ---------------------------------------------------------------------------------------------
# Blackwell's SM keeps Hopper's figures but for the MMA rate, the TMA rate and the clock:
# [FA4]: MUFU stays at 16 ops/clk/SM on B200 (why FA4 emulates part of exp2 on the FMAs).
# [CUDA-PG] cc 10.0: 128 fp32 results/clk/SM. Check [B200-DS]: 75 fp32 TFLOPS
# = 148 * 128 * 2 * 1.98 GHz = 75.0e12.
# Same SM sub-partition structure as Hopper: 4 schedulers, 1 warp instruction/clk each.
# Not measured on B200; same mbarrier mechanism as sm_90, so Hopper's 70 cycles [MEAS].
# [FA4]: shared memory bandwidth unchanged from H100, 128 B/clk/SM.
SM100 = Target(
    name="sm_100",
    capability=100,
    rates=replace(
        SM90.rates,
        # [B200-DS] dense per GPU: fp16/bf16 2.25 PFLOPS, fp8 4.5 PFLOPS, int8 4.5 POPS,
        # tf32 1.1 PFLOPS; 148 SMs. Per SM per clock at 1.86 GHz: 2.25e15 / (148 * 1.86e9) = 8173,
        # i.e. 8192 = twice Hopper's SM [FA4]; fp8/int8 16384, tf32 4096
        # (148 * 4096 * 1.86e9 = 1.13e15).
        mma_flops_per_cycle=_mma_rates(8192),
        # HBM alone: 7.7e12 B/s / 148 SMs / 1.86e9 Hz = 28.0 B/clk/SM [B200-DS]. L2 per SM not
        # measured on B200. Hopper's L2 figure (34, the value before) is too low: published
        # Blackwell GEMMs move more (docs/blackwell-evidence.md). The least rate the fastest of them
        # needs, with no idle time counted: Triton's Gluon tutorial 08, warp-specialized
        # persistent fp16 GEMM, 128x256x64 tiles (48 KiB of TMA loads per 2*128*256*64 FLOP), 1448
        # TFLOP/s at M=N=8192, K=16384: 1448e12 / (148 * 1.86e9) * 49152 / 4194304 = 61.6 -> 62
        # (JAX's Pallas Blackwell matmul guide, step 1, 128x128x64 at 1023 TFLOP/s: 58). With the
        # 90% L2 hits of SM90 that is ~72 B/clk/SM from L2. A lower bound, unmeasured here.
        tma_bytes_per_cycle=62,
        # Tensor clock implied by [B200-DS]: 2.25e15 / (148 * 8192) = 1.856e9 -> 1.86 GHz
        # (third-party spec databases list a 1.86 GHz tensor clock and a 1.98 GHz boost).
        clock_ghz=1.86,
    ),
    # 5 partitions: tcgen05 accumulates in TMEM and is issued by one thread, so the MMA and
    # load partitions are single, nearly register-free warps, which leaves room for more
    # compute groups: default/epilogue, load, MMA, and two TMEM-reading compute groups (the
    # two ping-ponged softmax groups of FA4-style attention). Model bound, not hardware;
    # it also keeps the CP-SAT partition symmetry small.
    max_partitions=5,
    # The channel cap (`Target.max_mbarriers`) four times Hopper's: at 64 (32 channel stages)
    # the scale benchmark's 155-op attention loop could not reach its best plans, which hand
    # 46 values over (92 mbarriers, 736 B of shared memory): every run stopped on plans that
    # pay the tcgen05 serial stall instead (benchmarks/results/2026-12-06-mbarrier-cap).
    # 256 = 128 channel stages, within the tie-break's channel (9 bits) and stage (10 bits)
    # fields. sm_90 keeps 64: its plans are measured on the GPU with it.
    max_mbarriers=256,
    # [PTX] Tensor Memory: 512 columns x 128 lanes per CTA, 32-bit cells (256 KiB); the
    # lanes and the 32-column allocation unit are Target's defaults.
    tmem_columns=512,
    mma_accumulator_in_registers=False,
    mma_issue_warps=1,
    tmem_reader_warps=4,
    measured=False,  # no Blackwell GPU here: every sm_100 figure is modeled
)

TARGETS: Mapping[str, Target] = MappingProxyType({"sm_90": SM90, "sm_100": SM100})

_BY_CAPABILITY: Mapping[int, Target] = MappingProxyType({t.capability: t for t in TARGETS.values()})
_SPEC_RE = re.compile(r"(?:cuda:)?(?:sm_?)?([1-9]\d*)a?")
_ACCEPTED = (
    "sm_90, sm90, sm_90a, 90, cuda:90, sm_100, sm100, sm_100a, 100, cuda:100 "
    "(or the integers 90, 100)"
)


def target_for(spec: str | int, triton: str | None = None) -> Target:
    """The Target for a spec such as ``"sm_90"``, ``"sm90"``, ``"90"``, ``90``, ``"cuda:100"``,
    under the lowering rules of Triton ``triton`` (default 3.6.0).

    The architecture-specific suffix ``a`` (``sm_90a``, ``sm_100a``) is accepted and ignored.
    Anything else raises ``ValueError`` listing the accepted names (or versions).
    """
    capability: int | None = None
    if isinstance(spec, int) and not isinstance(spec, bool):
        capability = spec
    elif isinstance(spec, str):
        match = _SPEC_RE.fullmatch(spec.strip().lower())
        if match:
            capability = int(match.group(1))
    target = _BY_CAPABILITY.get(capability) if capability is not None else None
    if target is None:
        raise ValueError(f"unknown target {spec!r}; accepted: {_ACCEPTED}")
    return target.for_triton(triton)

import dataclasses
import pickle
from types import MappingProxyType

import pytest

from ws_solver.model.target import (
    MMA_ELEMENT_TYPES,
    SM90,
    SM100,
    TARGETS,
    Rates,
    Target,
    target_for,
)

ALL = [SM90, SM100]


@pytest.mark.parametrize(
    "spec", ["sm_90", "sm90", "90", 90, "cuda:90", "sm_90a", "SM_90", " sm_90 "]
)
def test_target_for_accepts_hopper_names(spec):
    assert target_for(spec) is SM90


@pytest.mark.parametrize(
    "spec", ["sm_100", "sm100", "100", 100, "cuda:100", "sm_100a", "cuda:100a"]
)
def test_target_for_accepts_blackwell_names(spec):
    assert target_for(spec) is SM100


@pytest.mark.parametrize(
    "spec",
    ["sm_80", 80, "sm_120", 120, "hopper", "", "sm_", "cuda:", "90b", "sm_9_0", "090", True, 9.0],
)
def test_target_for_rejects_others_with_one_line_listing_names(spec):
    with pytest.raises(ValueError) as info:
        target_for(spec)
    message = str(info.value)
    assert "\n" not in message
    for name in ("sm_90", "sm_100", "cuda:90", "cuda:100"):
        assert name in message


def test_targets_table():
    assert dict(TARGETS) == {"sm_90": SM90, "sm_100": SM100}
    for name, target in TARGETS.items():
        assert target.name == name
        assert target_for(name) is target
        assert target_for(target.capability) is target
    assert (SM90.capability, SM100.capability) == (90, 100)


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_setmaxnreg_values(target):
    values = target.setmaxnreg_values()
    assert values[0] == 24
    assert values[-1] == 256
    assert len(values) == (256 - 24) // 8 + 1 == 30
    assert all(b - a == 8 for a, b in zip(values, values[1:], strict=False))
    assert 240 in values and 232 in values and 40 in values  # FA3 / CUTLASS anchors
    assert 20 not in values and 250 not in values and 264 not in values


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_register_file_arithmetic(target):
    assert target.registers_per_sm == 65_536
    assert target.threads_per_group == target.warps_per_group * target.threads_per_warp == 128
    # four warp groups of 128 threads at 128 registers fill the file exactly
    assert 4 * target.threads_per_group * 128 == target.registers_per_sm
    assert target.registers_fit([(4, 128)] * 4)
    assert not target.registers_fit([(4, 128)] * 3 + [(4, 136)])


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_register_anchors(target):
    # FlashAttention-3: one producer group at 24, two consumer groups at 240
    assert target.registers_fit([(4, 24), (4, 240), (4, 240)])
    # FA3 with three consumer groups: 32 + 3 * 160 = 512 per thread slot, exactly full
    assert target.registers_fit([(4, 32), (4, 160), (4, 160), (4, 160)])
    # CUTLASS warp-specialized GEMM: 40 + 232 + 232
    assert target.registers_fit([(4, 40), (4, 232), (4, 232)])
    # three groups at the setmaxnreg maximum over-subscribe the file
    assert not target.registers_fit([(4, 256)] * 3)
    assert target.registers_fit([(4, 256)] * 2)


def test_registers_fit_rejects_illegal_counts():
    with pytest.raises(ValueError):
        SM90.registers_fit([(4, 100)])  # not a multiple of 8
    with pytest.raises(ValueError):
        SM90.registers_fit([(4, 264)])  # above 256
    with pytest.raises(ValueError):
        SM90.registers_fit([(4, 16)])  # below 24
    with pytest.raises(ValueError):
        SM90.registers_fit([(0, 128)])


@pytest.mark.parametrize(
    ("warps", "regs"),
    [(1, 256), (4, 256), (8, 256), (10, 168), (12, 168), (16, 128), (24, 80), (32, 64)],
)
def test_max_regs_per_thread_for(warps, regs):
    assert SM90.max_regs_per_thread_for(warps) == regs
    groups = -(-warps // 4)
    assert groups * 128 * regs <= SM90.registers_per_sm
    assert regs in SM90.setmaxnreg_values()


@pytest.mark.parametrize(
    ("warps", "budget"), [(8, 65_536), (12, 64_512), (16, 65_536), (20, 61_440), (24, 61_440)]
)
def test_register_budget_is_the_even_share_rounded_down(warps, budget):
    """AllocateWarpGroups shares out maxnreg x threads, maxnreg being 64K / threads rounded
    down to 8: 20 warps give 96 registers a thread, 61,440 in all, not the whole file."""
    assert SM90.register_budget(warps) == budget == SM100.register_budget(warps)
    assert budget <= SM90.registers_per_sm


@pytest.mark.parametrize("warps", [0, 33, -4])
def test_max_regs_per_thread_for_rejects_bad_warp_counts(warps):
    with pytest.raises(ValueError):
        SM90.max_regs_per_thread_for(warps)


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_cta_limits(target):
    assert target.max_warps_per_cta * target.threads_per_warp == 1024
    assert target.allowed_partition_warps == (1, 2, 4, 8)
    assert all(w & (w - 1) == 0 for w in target.allowed_partition_warps)
    assert target.shared_memory_per_cta == 227 * 1024 == 232_448
    assert target.named_barriers == 16
    assert target.max_mbarriers > 0
    assert (target.setmaxnreg_min, target.setmaxnreg_max, target.setmaxnreg_step) == (24, 256, 8)
    # the model's partitions must all be able to run at once
    assert target.max_partitions * min(target.allowed_partition_warps) <= target.max_warps_per_cta


def test_hopper_has_no_tmem_and_register_accumulators():
    assert SM90.tmem_columns == 0
    assert not SM90.has_tmem
    assert SM90.tmem_reader_warps == 0
    assert SM90.mma_accumulator_in_registers
    assert SM90.mma_issue_warps == 4
    with pytest.raises(ValueError):
        SM90.tmem_alloc_columns(32)


def test_blackwell_tmem():
    assert SM100.has_tmem
    assert SM100.tmem_columns == 512
    assert SM100.tmem_lanes == 128
    assert SM100.tmem_min_alloc_columns == 32
    assert not SM100.mma_accumulator_in_registers
    assert SM100.mma_issue_warps == 1
    assert SM100.tmem_reader_warps == 4
    # a 128x128 fp32 accumulator is 128 columns; two of them plus a 128x256 fit exactly
    assert SM100.tmem_alloc_columns(128) * 2 + SM100.tmem_alloc_columns(256) == 512


@pytest.mark.parametrize(
    ("asked", "taken"),
    [(1, 32), (16, 32), (32, 32), (33, 64), (64, 64), (100, 128), (129, 256), (512, 512)],
)
def test_tmem_allocation_rounds_to_power_of_two(asked, taken):
    assert SM100.tmem_alloc_columns(asked) == taken


@pytest.mark.parametrize("columns", [0, 513, -1])
def test_tmem_allocation_out_of_range(columns):
    with pytest.raises(ValueError):
        SM100.tmem_alloc_columns(columns)


def test_partition_bounds():
    assert SM90.max_partitions == 4
    assert SM100.max_partitions == 5


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_rates_positive_and_complete(target):
    rates = target.rates
    assert set(rates.mma_flops_per_cycle) == set(MMA_ELEMENT_TYPES)
    assert all(v > 0 for v in rates.mma_flops_per_cycle.values())
    for f in dataclasses.fields(Rates):
        if f.name != "mma_flops_per_cycle":
            assert getattr(rates, f.name) > 0, f.name


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_rate_ordering(target):
    mma = target.rates.mma_flops_per_cycle
    for f8 in ("f8E4M3FN", "f8E5M2"):
        assert mma[f8] >= mma["f16"]
    assert mma["f16"] == mma["bf16"]
    assert mma["f32"] < mma["f16"]  # tf32 is slower
    # the tensor cores out-run the fp32 ALUs, which out-run the SFU
    assert mma["f16"] > 2 * target.rates.alu_ops_per_cycle > target.rates.sfu_ops_per_cycle


def test_datasheet_peaks_reproduced():
    # dense fp16 peak = SMs * FLOP/clk/SM * clock: H100/H200 SXM 989.4 TFLOPS, B200 2.25 PFLOPS
    h = 132 * SM90.rates.mma_flops_per_cycle["f16"] * SM90.rates.clock_ghz * 1e9
    b = 148 * SM100.rates.mma_flops_per_cycle["bf16"] * SM100.rates.clock_ghz * 1e9
    assert h == pytest.approx(989.4e12, rel=0.01)
    assert b == pytest.approx(2.25e15, rel=0.01)
    # Blackwell doubles the per-SM tensor rate, not the SFU or shared memory rate
    assert SM100.rates.mma_flops_per_cycle["f16"] == 2 * SM90.rates.mma_flops_per_cycle["f16"]
    assert SM100.rates.sfu_ops_per_cycle == SM90.rates.sfu_ops_per_cycle
    assert SM100.rates.smem_bytes_per_cycle == SM90.rates.smem_bytes_per_cycle


def test_tma_rate_between_hbm_share_and_smem():
    # what one SM pulls must beat its HBM share (L2 reuse) and cannot beat shared memory
    hbm_share = 4.8e12 / 132 / (SM90.rates.clock_ghz * 1e9)
    assert hbm_share < SM90.rates.tma_bytes_per_cycle < SM90.rates.smem_bytes_per_cycle


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_targets_are_immutable(target):
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.registers_per_sm = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        target.rates.clock_ghz = 3.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        target.rates.mma_flops_per_cycle["f16"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        TARGETS["sm_80"] = target  # type: ignore[index]


def test_rates_copy_caller_mapping():
    source = dict(SM90.rates.mma_flops_per_cycle)
    rates = dataclasses.replace(SM90.rates, mma_flops_per_cycle=source)
    source["f16"] = 1
    assert rates.mma_flops_per_cycle["f16"] == 4096
    assert isinstance(rates.mma_flops_per_cycle, MappingProxyType)


def test_targets_hashable_and_comparable():
    assert len({SM90, SM100, target_for(90)}) == 2
    copy = dataclasses.replace(SM90, rates=dataclasses.replace(SM90.rates))
    assert copy == SM90
    assert hash(copy) == hash(SM90)
    assert copy != SM100


def test_invalid_definitions_rejected():
    with pytest.raises(ValueError):
        dataclasses.replace(SM90.rates, sfu_ops_per_cycle=0)
    missing_i8 = {k: v for k, v in SM90.rates.mma_flops_per_cycle.items() if k != "i8"}
    with pytest.raises(ValueError):
        dataclasses.replace(SM90.rates, mma_flops_per_cycle=missing_i8)
    with pytest.raises(ValueError):
        dataclasses.replace(SM100, tmem_columns=384)
    with pytest.raises(ValueError):
        dataclasses.replace(SM90, allowed_partition_warps=(4, 2))
    with pytest.raises(ValueError):
        Target(name="x", capability=1, rates=SM90.rates, setmaxnreg_min=20)


@pytest.mark.parametrize("capability", [90, 100])
@pytest.mark.parametrize("triton", ["3.6.0", "3.9.0"])
def test_a_target_pickles_as_it_is(capability: int, triton: str) -> None:
    # Loops go to worker processes (compare, explore, Ray) with their Target.
    target = target_for(capability, triton)
    again = pickle.loads(pickle.dumps(target))
    assert again == target and hash(again) == hash(target) and again.triton == target.triton
    custom = dataclasses.replace(target, max_partitions=3)
    assert pickle.loads(pickle.dumps(custom)) == custom


@pytest.mark.parametrize("target", ALL, ids=lambda t: t.name)
def test_mbarrier_cap_fits_the_tiebreak(target):
    """Each channel stage takes two mbarriers, so the cap bounds the channels and the stages
    a plan can have: both must fit their tie-break fields, or the objective's lexicographic
    order breaks (the encoding does not clamp them)."""
    from ws_solver.model.cost import TIEBREAK_BITS

    *_, channel_bits, stage_bits = TIEBREAK_BITS
    most = target.max_mbarriers // 2
    assert most < 2**channel_bits and most < 2**stage_bits

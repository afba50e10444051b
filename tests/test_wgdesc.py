"""ws_solver.triton.wgdesc: wgmma descriptors built by one 64-bit add each (sm_90 PTX)."""

from __future__ import annotations

import random
import re

import pytest

from ws_solver.triton.wgdesc import fold_wgmma_descriptors

HIGH = 4611686293305294848  # Triton's layout bits: a zero low word
# Triton 3.9's shape: a base address in 16-byte units, k-step descriptors by 32-bit offsets
# (added, or or-ed into bits above the base), then zero-extended and or-ed with HIGH.
PTX = f"""\
\t.reg .b32 \t%r<20>;
\t.reg .b64 \t%rd<20>;
\tadd.s32 \t%r2, %r1, 65536;
\tbfe.u32 \t%r3, %r2, 4, 15;
\tcvt.u64.u32 \t%rd1, %r3;
\tor.b64 \t%rd2, %rd1, {HIGH};
\tadd.s32 \t%r4, %r3, 2;
\tcvt.u64.u32 \t%rd3, %r4;
\tor.b64 \t%rd4, %rd3, {HIGH};
\tor.b32 \t%r5, %r3, 67108864;
\tcvt.u64.u32 \t%rd5, %r5;
\tor.b64 \t%rd6, %rd5, {HIGH};
\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{%r10}}, %rd2, %rd4, 0, 1, 1, 0, 0;
\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{%r10}}, %rd6, %rd4, 1, 1, 1, 0, 0;
\tret;"""
DESCRIPTORS = ("%rd2", "%rd4", "%rd6")


def _run(ptx: str, r1: int) -> dict[str, int]:
    """The values of the PTX's integer registers, with %r1 = r1 (the few ops it uses)."""
    mask32, mask64 = (1 << 32) - 1, (1 << 64) - 1
    regs = {"%r1": r1}

    def val(x: str) -> int:
        return regs[x] if x.startswith("%") else int(x)

    for line in ptx.splitlines():
        m = re.match(r"^\s*([a-z][\w.]*)\s+(%\w+),\s*(.+);$", line)
        if not m or m.group(1).startswith("wgmma"):
            continue
        op, dst, args = m.group(1), m.group(2), [a.strip() for a in m.group(3).split(",")]
        if op == "bfe.u32":
            regs[dst] = (val(args[0]) >> int(args[1])) & ((1 << int(args[2])) - 1)
        elif op == "add.s32":
            regs[dst] = (val(args[0]) + val(args[1])) & mask32
        elif op == "or.b32":
            regs[dst] = val(args[0]) | val(args[1])
        elif op == "cvt.u64.u32":
            regs[dst] = val(args[0])
        elif op == "or.b64":
            regs[dst] = val(args[0]) | val(args[1])
        elif op == "add.s64":
            regs[dst] = (val(args[0]) + val(args[1])) & mask64
        else:
            raise AssertionError(f"unexpected op {op}")
    return regs


def test_each_descriptor_becomes_one_add_of_a_shared_copy_of_the_base():
    out, report = fold_wgmma_descriptors(PTX)
    assert (report.folded, report.bases, report.reason) == (3, 1, "")
    assert "\t.reg .b64 \t%rd<21>;" in out
    assert "bfe.u32 \t%r3, %r2, 4, 15;\n\tcvt.u64.u32 \t%rd20, %r3;" in out
    assert f"add.s64 \t%rd2, %rd20, {HIGH};" in out
    assert f"add.s64 \t%rd4, %rd20, {HIGH + 2};" in out
    assert f"add.s64 \t%rd6, %rd20, {HIGH + 67108864};" in out
    assert "or.b64" not in out


def test_the_descriptors_keep_their_values():
    out, _ = fold_wgmma_descriptors(PTX)
    rng = random.Random(0)
    for r1 in [0, (1 << 32) - 1, *(rng.getrandbits(32) for _ in range(200))]:
        before, after = _run(PTX, r1), _run(out, r1)
        assert [before[d] for d in DESCRIPTORS] == [after[d] for d in DESCRIPTORS], r1


@pytest.mark.parametrize(
    ("ptx", "reason"),
    [
        # the or.b32 would overlap the base's 15 bits: not an add
        (
            PTX.replace("67108864", "67108865").replace(
                "add.s32 \t%r4, %r3, 2;", "mov.b32 \t%r4, %r3;"
            ),
            "no descriptor",
        ),
        # the 32-bit add could wrap
        (
            PTX.replace("add.s32 \t%r4, %r3, 2;", f"add.s32 \t%r4, %r3, {(1 << 32) - 2};").replace(
                "or.b32 \t%r5, %r3, 67108864;", "mov.b32 \t%r5, %r3;"
            ),
            "no descriptor",
        ),
        # the base has two definitions
        (PTX.replace("\tret;", "\tbfe.u32 \t%r3, %r2, 4, 15;\n\tret;"), "no descriptor"),
        # the high part reaches into the low word
        (PTX.replace(str(HIGH), str(HIGH + 1)), "no descriptor"),
        # two functions
        (PTX + "\n\t.reg .b64 \t%rd<3>;", "2 functions"),
    ],
)
def test_anything_not_proven_is_left_alone(ptx, reason):
    out, report = fold_wgmma_descriptors(ptx)
    assert out == ptx
    assert reason in report.reason
    assert report.note().startswith("wgmma descriptors not folded")


def test_a_base_with_no_offset_chain_is_left_as_it_is():
    """Triton 3.6's shape (the or.b64 on the extended base alone, the rest 64-bit adds)."""
    ptx = "\n".join(
        line
        for line in PTX.splitlines()
        if not re.search(r"%r4\b|%rd3\b|%rd4\b|%r5\b|%rd5\b|%rd6\b", line)
    )
    out, report = fold_wgmma_descriptors(ptx)
    assert out == ptx and "no descriptor" in report.reason


@pytest.mark.triton
def test_the_drop_in_folds_triton_3_9s_attention_descriptors():
    """Compiled on the CPU: ws_solver's plan of attention d128. Triton 3.9 prints the 32-bit
    form (folded), 3.6 the 64-bit one (nothing to do)."""
    from triton_util import compile_corpus as _compile

    from ws_solver.triton import versions

    kernel = _compile("attention_fwd", "d128_m128n128_w8_s2", "optimal")
    notes = [n for n in kernel.metadata.ws_solver["notes"] if "descriptor" in n]
    if versions.installed().name == "3.9.0":
        assert notes == ["wgmma descriptors: 16 built by 64-bit adds on 2 base(s)"]
    else:
        assert notes == []
    assert kernel.asm["cubin"]


@pytest.mark.triton
def test_it_can_be_turned_off():
    from triton_util import compile_corpus as _compile

    kernel = _compile("attention_fwd", "d128_m128n128_w8_s2", "optimal", fold_descriptors=False)
    assert not [n for n in kernel.metadata.ws_solver["notes"] if "descriptor" in n]

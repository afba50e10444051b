"""Spill instructions counted by where they sit in a kernel's loops, from SASS text."""

import subprocess

import pytest

from ws_solver.triton.toolchain.sass_loops import LoopSpills, find_loops, loop_spills, parse_sass


def sass(*lines: str) -> str:
    """nvdisasm-like text: labels as given, instructions numbered 0x10 apart."""
    out = ['\t.section\t.text.k,"ax",@progbits', "k:"]
    address = 0
    for line in lines:
        if line.endswith(":"):
            out.append(line)
            continue
        out.append(f"        /*{address:04x}*/                   {line} ;")
        address += 0x10
    return "\n".join(out) + "\n"


# A flattened persistent GEMM as ptxas lays it out (issue 48's Triton 3.9 build): one loop
# whose tile prologue and epilogue are forward-branched regions, its counter spilled.
FLAT = sass(
    "STL [R1], R0",  # prologue: outside any loop
    ".L_x_4:",
    "LDL R210, [R1]",  # every iteration
    "@P1 BRA `(.L_x_2)",
    "LDL R164, [R1+0x4]",  # the tile prologue, skipped on most iterations
    "STL [R1], R210",
    ".L_x_2:",
    "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24",
    "@P6 BRA `(.L_x_3)",
    "LDL R19, [R1+0x14]",  # the epilogue, once per tile
    ".L_x_3:",
    "LDL.LU R14, [R1+0x10]",  # the loop counter: every iteration
    "@!P1 EXIT",
    "STL [R1+0x10], R14",
    "BRA `(.L_x_4)",
    ".L_x_5:",
    "BRA `(.L_x_5)",  # ptxas's padding after the end: no loop
)


def test_flattened_loop_counts_only_the_every_iteration_path_as_hot():
    assert loop_spills(FLAT) == LoopSpills(loops=1, total=7, in_loops=6, hot=3)


# A persistent GEMM with a tile loop around its K loop, and an mbarrier wait's retry out of
# line after EXIT (its branch back makes an overlapping loop, never one inside the K loop).
NESTED = sass(
    ".L_tile:",
    "STL [R1+0x8], R7",  # the tile loop's body: in a loop, not hot
    ".L_k:",
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R14",
    "@!P0 BRA `(.L_retry)",
    ".L_back:",
    "LDL R7, [R1+0x8]",  # the K loop: hot
    "@P0 BRA `(.L_k)",
    "LDL R8, [R1+0xc]",  # the tile epilogue
    "@P2 BRA `(.L_tile)",
    "EXIT",
    ".L_retry:",
    "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R14",
    "@!P0 BRA `(.L_retry)",
    "BRA `(.L_back)",
)


def test_nested_loops_weigh_the_innermost_and_out_of_line_retries_do_not_nest():
    code, labels = parse_sass(NESTED)[0]
    heads = [head for head, _ in find_loops(code, labels)]
    assert len(heads) == 4  # tile, K, the branch back from the retry, the retry itself
    assert loop_spills(NESTED) == LoopSpills(loops=4, total=3, in_loops=3, hot=1)


def test_no_loop_no_hot_spill_and_modifiers_and_predicates_read():
    text = sass("@!P0 STL.64 [R1], R2", "LDL.LU.128 R4, [R1]", "LDG.E R5, desc[UR4][R2.64]")
    assert loop_spills(text) == LoopSpills(loops=0, total=2, in_loops=0, hot=0)


def test_sections_keep_their_own_addresses():
    two = FLAT + sass(".L_y:", "LDL R1, [R1]", "@P0 BRA `(.L_y)")
    assert loop_spills(two) == LoopSpills(loops=2, total=8, in_loops=7, hot=4)


# A loop that reads and writes a local array at a run-time index (ptxas cannot keep it in
# registers), and one load after it.
LOCAL_LOOP_PTX = """\
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
	.local .align 4 .b8 buf[64];
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u64 %rd2, buf;
	mov.u32 %r2, 0;
LOOP:
	.pragma "nounroll";
	and.b32 %r3, %r2, 15;
	mul.wide.u32 %rd3, %r3, 4;
	add.u64 %rd4, %rd2, %rd3;
	ld.local.u32 %r4, [%rd4];
	add.u32 %r4, %r4, %r2;
	st.local.u32 [%rd4], %r4;
	add.u32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra LOOP;
	ld.local.u32 %r5, [buf+4];
	cvta.to.global.u64 %rd5, %rd1;
	st.global.u32 [%rd5], %r5;
	ret;
}
"""


def test_a_real_cubin_from_the_bundled_ptxas_and_nvdisasm(tmp_path):
    pytest.importorskip("triton")
    from triton.backends.nvidia.compiler import get_ptxas

    from ws_solver.triton.toolchain.binary_usage import cubin_loop_spills

    src, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    src.write_text(LOCAL_LOOP_PTX)
    subprocess.run(
        [get_ptxas(90).path, "--gpu-name=sm_90a", str(src), "-o", str(cubin)], check=True
    )
    spills = cubin_loop_spills(cubin.read_bytes())
    assert spills == LoopSpills(loops=1, total=3, in_loops=2, hot=2)

"""ws_solver.triton.rewrites.pingpong: the two warp groups of an sm_90 consumer take turns at the
tensor cores (named barriers in the PTX)."""

from __future__ import annotations

import re

import pytest

from ws_solver.core.candidates import parse
from ws_solver.triton.rewrites.pingpong import take_turns
from ws_solver.triton.rewrites.wgrelease import release_per_warp_group

# An attention-shaped consumer as Triton prints it: a loop that waits for K, issues S = Q·Kᵀ
# (group A), awaits it, releases K's stage under the partition barrier, computes (the
# softmax), waits for V and issues O += P·V (group B); a skip branch around the loop; the
# last release after it.
PTX = """\
\t.reg .pred \t%p<10>;
\t.reg .b32 \t%r<40>;
\tmov.u32 \t%r1, %tid.x;
\tand.b32 \t%r2, %r1, 255;
\tsetp.eq.b32 \t%p1, %r2, 0;
\tmov.b32 \t%r3, global_smem;
\tadd.s32 \t%r4, %r3, 1024;
\t@%p1 mbarrier.init.shared::cta.b64 [%r4], 1;
\tadd.s32 \t%r5, %r3, 1032;
\t@%p1 mbarrier.init.shared::cta.b64 [%r5], 1;
\tbar.sync \t0, 256;
\t@%p5 bra \t$L__BB0_3;
\tmov.b32 \t%r20, 0;
$L__BB0_2:
\tshl.b32 \t%r10, %r20, 3;
\tadd.s32 \t%r11, %r3, %r10;
\tadd.s32 \t%r12, %r11, 1056;
\tmbarrier.try_wait.parity.shared.b64 complete, [%r12], %r21;
\twgmma.fence.sync.aligned;
\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r30}, %rd1, %rd2, %p3, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 0;
\tadd.s32 \t%r13, %r11, 1024;
\tbar.sync \t0, 256;
\t@%p1 mbarrier.arrive.shared::cta.b64 _, [%r13];
\tSOFTMAX
\twgmma.fence.sync.aligned;
\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r31}, {%r32}, %rd3, %p3, 1, 1, 1;
\twgmma.commit_group.sync.aligned;
\t@%p2 bra \t$L__BB0_2;
$L__BB0_3:
\twgmma.wait_group.sync.aligned 0;
\tshl.b32 \t%r14, %r22, 3;
\tadd.s32 \t%r15, %r4, %r14;
\tbar.sync \t0, 256;
\tand.pred \t%p3, %p1, %p4;
\t@%p3 mbarrier.arrive.shared::cta.b64 _, [%r15];
\tbar.sync \t0, 256;
\tret;
"""
SOFTMAX = "ex2.approx.ftz.f32 \t%r30, %r30;"


def _released(softmax: str = SOFTMAX) -> tuple[str, frozenset[int]]:
    """The fixture after wgrelease, and the barrier ids wgrelease took."""
    out, report = release_per_warp_group(PTX.replace("SOFTMAX", softmax), 8, 2)
    assert not report.reason, report.reason
    return out, frozenset(report.barrier_ids)


# -- the barrier protocol, executed ------------------------------------------------------------
_BAR = re.compile(r"^\s*(?:@(!?)(%p\d+)\s+)?bar\.(sync|arrive)\s+(\S+),\s*(\d+);")


def _events(ptx: str, wg: int, trips: int) -> list[tuple[str, int, int]]:
    """The (op, barrier id, threads) a warp group executes on a path with ``trips``
    iterations: the skip branch taken when 0, else preheader, body x trips, latch exit.
    Registers are evaluated the way the rewrite computes them from %tid.x."""
    lines = ptx.split("\n")
    header = lines.index("$L__BB0_2:")
    latch = next(i for i, line in enumerate(lines) if "bra \t$L__BB0_2;" in line)
    exit_ = lines.index("$L__BB0_3:")
    skip = next(i for i, line in enumerate(lines) if "bra \t$L__BB0_3;" in line)
    path = list(range(skip + 1))
    if trips:
        path += list(range(skip + 1, header))
        path += list(range(header, latch + 1)) * trips
        path += list(range(latch + 1, exit_))
    path += list(range(exit_, len(lines)))
    regs: dict[str, int] = {}
    preds: dict[str, bool] = {}
    tid = 128 * wg
    out = []
    for i in path:
        line = lines[i]
        if m := re.match(r"^\s*shr\.u32\s+(%r\d+), %r1, 7;", line):
            regs[m.group(1)] = tid >> 7
        elif m := re.match(r"^\s*and\.b32\s+(%r\d+), (%r\d+), 1;", line):
            regs[m.group(1)] = regs[m.group(2)] & 1
        elif m := re.match(r"^\s*setp\.eq\.b32\s+(%p\d+), (%r\d+), 1;", line):
            preds[m.group(1)] = regs[m.group(2)] == 1
        elif m := re.match(r"^\s*add\.s32\s+(%r\d+), (%r\d+), (\d+);", line):
            if m.group(2) in regs:
                regs[m.group(1)] = regs[m.group(2)] + int(m.group(3))
        elif m := re.match(r"^\s*sub\.s32\s+(%r\d+), (\d+), (%r\d+);", line):
            regs[m.group(1)] = int(m.group(2)) - regs[m.group(3)]
        elif m := _BAR.match(line):
            negate, pred, op, bar, threads = m.groups()
            if pred is not None and preds.get(pred, False) == bool(negate):
                continue
            if bar.startswith("%r") and bar not in regs:
                bar_id = -1 - wg  # wgrelease's barrier over the warp group alone
            else:
                bar_id = regs[bar] if bar.startswith("%r") else int(bar)
            out.append((op, bar_id, int(threads)))
    return out


def _run(ptx: str, trips: int) -> dict[int, list[int]]:
    """Execute both warp groups' barrier events under PTX's rules (a phase of barrier b
    completes when ``threads`` have arrived; a sync waits for its phase); each named
    barrier's phases, as the warp groups that synced in each. Fails on a deadlock or a
    phase that more than its count arrive at."""
    seqs = [_events(ptx, wg, trips) for wg in (0, 1)]
    pos = [0, 0]
    arrived: dict[int, list[tuple[int, str]]] = {}
    waiting: list[int | None] = [None, None]  # the barrier a warp group is synced on
    phases: dict[int, list[list[int]]] = {}
    while pos[0] < len(seqs[0]) or pos[1] < len(seqs[1]) or any(w is not None for w in waiting):
        moved = False
        for wg in (0, 1):
            if waiting[wg] is not None or pos[wg] >= len(seqs[wg]):
                continue
            op, bar, threads = seqs[wg][pos[wg]]
            pos[wg] += 1
            moved = True
            if bar < 0:  # a barrier over one warp group: completes at once
                assert threads == 128
                continue
            arrived.setdefault(bar, []).append((wg, op))
            assert len(arrived[bar]) * 128 <= threads, f"barrier {bar} over-subscribed"
            if op == "sync":
                waiting[wg] = bar
            if len(arrived[bar]) * 128 == threads:
                phases.setdefault(bar, []).append([w for w, o in arrived[bar] if o == "sync"])
                for w, o in arrived.pop(bar):
                    if o == "sync":
                        waiting[w] = None
        assert moved, f"deadlock: {waiting}, at {pos}"
    assert not arrived, f"phases left open: {arrived}"
    return phases


@pytest.mark.parametrize("trips", [0, 1, 2, 5])
def test_the_warp_groups_take_turns_in_every_trip_count(trips):
    released, taken = _released()
    out, report = take_turns(released, taken)
    assert report.loops == 1 and not report.reason
    phases = _run(out, trips)
    turns = {b: p for b, p in phases.items() if b not in (0, *taken)}
    if not trips:
        assert not turns  # a skipped loop runs none of it
        return
    first, second = sorted(turns)
    # every phase of a warp group's barrier: that warp group syncs, the other arrives
    assert all(p == [0] for p in turns[first]) and all(p == [1] for p in turns[second])
    # turns per warp group: A of the first trip, B + A of each later one, B of the last;
    # plus warp group 0's credit taken back at the end
    assert len(turns[first]) == trips + 2 and len(turns[second]) == trips + 1


def test_the_turns_sit_around_the_groups_and_use_free_barriers():
    released, taken = _released()
    out, _ = take_turns(released, taken)
    lines = out.split("\n")
    fences = [i for i, line in enumerate(lines) if "wgmma.fence" in line]
    commits = [i for i, line in enumerate(lines) if "wgmma.commit_group" in line]
    assert re.match(r"^\s*bar\.arrive \t%r\d+, 256;", lines[commits[0] + 1])
    assert re.match(r"^\s*bar\.sync \t%r\d+, 256;", lines[fences[1] - 1])
    ids = {int(m) for m in re.findall(r"add\.s32 \t%r\d+, %r\d+, (\d+);", out)}
    assert taken == {1, 2} and 3 in ids  # wgrelease's pair is 1, 2; the turns take 3, 4
    assert ".reg .pred \t%p<12>;" in out and ".reg .b32 \t%r<45>;" in out


def _drop_line(text: str, needle: str, nth: int = 0) -> str:
    lines = text.split("\n")
    at = [i for i, line in enumerate(lines) if needle in line][nth]
    return "\n".join(lines[:at] + lines[at + 1 :])


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda t: _drop_line(t, "wgmma.fence", 1), "no loop of a two-warp-group consumer"),
        (lambda t: _drop_line(t, "wgmma.wait_group.sync.aligned 0", 0), "does not await A"),
        (lambda t: t.replace(SOFTMAX, "bar.sync \t0, 256;"), "more than a warp group"),
        (lambda t: t.replace(SOFTMAX, "@%p7 bra \t$L__BB0_3;"), "another exit"),
        (
            lambda t: t.replace("\tmov.b32 \t%r20, 0;\n", "\tbra.uni \t$L__BB0_2;\n"),
            "entered by 1 branch",
        ),
        (
            lambda t: t.replace("\tret;", "\tbar.sync \t%r30, 64;\n\tret;"),
            "takes its id from a register",
        ),
    ],
)
def test_anything_unrecognised_leaves_the_ptx_alone(edit, reason):
    released, taken = _released()
    ptx = edit(released)
    out, report = take_turns(ptx, taken)
    assert out == ptx
    assert reason in report.reason, report.reason
    assert report.note().startswith("warp-group turns not applied")


def test_a_loop_wgrelease_did_not_touch_is_not_a_consumer_of_two_warp_groups():
    out, report = take_turns(PTX.replace("SOFTMAX", SOFTMAX))
    assert out == PTX.replace("SOFTMAX", SOFTMAX)
    assert "no loop" in report.reason


def test_the_knob_is_named_tt1():
    candidate = parse("optimal~tt1")
    assert candidate.take_turns and candidate.name == "optimal~tt1"
    assert candidate.enable_keywords()["take_turns"] is True
    assert not parse("optimal").take_turns


def _compile(config_name: str, **settings):
    from corpus import kernels as corpus_kernels
    from tests.triton_util import compile_corpus_kernel

    config = corpus_kernels.load("attention_fwd").CONFIGS[config_name]
    return compile_corpus_kernel("attention_fwd", config, "optimal", cache=False, **settings)


def _turn_notes(kernel) -> list[str]:
    return [n for n in kernel.metadata.ws_solver["notes"] if "warp-group turns" in n]


@pytest.mark.triton
def test_the_drop_in_applies_it_when_asked_and_ptxas_assembles_it():
    """Compiled on the CPU: attention d128's consumer loop takes turns with take_turns=True
    (the H200 runs: benchmarks/results/2026-12-02-warp-group-turns), and not by default."""
    kernel = _compile("d128_m128n128_w8_s2", take_turns=True)
    assert _turn_notes(kernel) == ["warp-group turns: 1 loop(s) take turns at the tensor cores"]
    assert kernel.asm["cubin"]
    assert re.search(r"bar\.arrive \t%r\d+, 256;", kernel.asm["ptx"])
    default = _compile("d128_m128n128_w8_s2")
    assert not _turn_notes(default)
    assert not re.search(r"bar\.arrive \t%r\d+, 256;", default.asm["ptx"])

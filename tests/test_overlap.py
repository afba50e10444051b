"""Sinking sm_90 wgmma waits to their first use (ws_solver.triton.rewrites.overlap)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ws_solver import ir
from ws_solver.triton.rewrites.overlap import sink_wgmma_waits, sink_wgmma_waits_report
from ws_solver.triton.rewrites.wgmma import DOT, WAIT

SMEM = "!ttg.memdesc<64x64xf16, #shared, #smem>"
ACC = "tensor<64x64xf32, #mma>"
DOT_TYPE = f"{SMEM} * {SMEM} -> {ACC}"


def _loop(body: str) -> str:
    """A module whose loop body is `body` (ops may use %q, %k, %v, %acc, %init, %iv)."""
    lines = "\n".join(f"      {line}" for line in body.strip().splitlines())
    return f"""\
module {{
  tt.func @f(%q: {SMEM}, %k: {SMEM}, %v: {SMEM}, %lb: i32, %ub: i32, %init: {ACC}) {{
    %c1 = arith.constant 1 : i32
    %r = scf.for %iv = %lb to %ub step %c1 iter_args(%acc = %init) -> ({ACC})  : i32 {{
{lines}
    }}
    tt.return
  }}
}}
"""


def _dot(name: str, acc: str, a: str = "%q", b: str = "%k") -> str:
    return f"{name} = ttng.warp_group_dot {a}, {b}, {acc} {{isAsync = true}} : {DOT_TYPE}"


def _wait(name: str, value: str, pendings: int = 0) -> str:
    return (
        f"{name}:3 = ttng.warp_group_dot_wait {value}, %q, %k {{pendings = {pendings} : i32}}"
        f" : {ACC}, {SMEM}, {SMEM}"
    )


def _body_ops(text: str) -> list[str]:
    """The loop body's op names, with a wait shown as wait(pendings)."""
    loop = next(op for op in ir.parse(text).walk() if op.name == "scf.for")
    return [
        f"wait({op.attr('pendings')})" if op.name.endswith("dot_wait") else op.name
        for op in loop.body.ops
    ]


SOFTMAX_AHEAD = _loop(
    f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
%e = math.exp2 %acc : {ACC}
%m = arith.mulf %e, %e : {ACC}
{_dot("%d", "%m", a="%v", b="%v")}
%sum = arith.addf %w#0, %d : {ACC}
scf.yield %sum : {ACC}
"""
)


def test_wait_moves_to_its_first_use_and_counts_the_wgmmas_it_passes():
    out, report = sink_wgmma_waits_report(SOFTMAX_AHEAD)
    assert _body_ops(out) == [
        "ttng.warp_group_dot",
        "math.exp2",
        "arith.mulf",
        "ttng.warp_group_dot",
        "wait(1)",  # the wgmma issued after it stays in flight; the first one retires
        "arith.addf",
        "scf.yield",
    ]
    assert (report.sunk, report.passed_ops) == (1, 3)
    ir.parse(out)  # still well formed


def test_sinking_is_idempotent():
    once = sink_wgmma_waits(SOFTMAX_AHEAD)
    assert sink_wgmma_waits(once) == once


@pytest.mark.parametrize(
    "blocker",
    [
        f"ttg.local_store %acc, %k : {ACC} -> {SMEM}",  # writes shared memory
        f"%x = arith.addf %w#0, %acc : {ACC}",  # reads the wait's result
        f"%x = ttng.warp_group_dot %q, %k, %acc : {DOT_TYPE}",  # synchronous wgmma
        "scf.if %cond {\n} else {\n}",  # a region: not looked into
    ],
)
def test_wait_stops_at_the_first_op_it_cannot_pass(blocker):
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
%e = math.exp2 %acc : {ACC}
{blocker}
%sum = arith.addf %w#0, %e : {ACC}
scf.yield %sum : {ACC}
"""
    text = _loop(body).replace("(%q: ", "(%cond: i1, %q: ")
    ops = _body_ops(sink_wgmma_waits(text))
    assert ops.index("wait(0)") == ops.index("math.exp2") + 1


BAR = "!ttg.memdesc<1xi64, #shared1, #smem, mutable>"


def test_a_release_moves_down_with_its_wait_until_a_barrier_wait():
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
ttng.arrive_barrier %bar, 1 : {BAR}
%e = math.exp2 %acc : {ACC}
ttng.wait_barrier %bar, %c1 : {BAR}
%x = arith.addf %w#0, %e : {ACC}
scf.yield %x : {ACC}
"""
    text = _loop(body).replace("(%q: ", f"(%bar: {BAR}, %q: ")
    out, report = sink_wgmma_waits_report(text)
    assert _body_ops(out) == [
        "ttng.warp_group_dot",
        "math.exp2",
        "wait(0)",
        "ttng.arrive_barrier",  # the release stays after the wait that retires the wgmma
        "ttng.wait_barrier",  # which the producer may need the release to satisfy
        "arith.addf",
        "scf.yield",
    ]
    assert (report.sunk, report.passed_ops, report.carried_releases) == (1, 1, 1)


def test_keep_releases_holds_a_wait_above_the_release_it_would_carry():
    """With the stages released per warp group, a release keeps its place; a wait still
    moves over the tensor work before it."""
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
%p = math.exp2 %acc : {ACC}
ttng.arrive_barrier %bar, 1 : {BAR}
%e = math.exp2 %acc : {ACC}
%x = arith.addf %w#0, %e : {ACC}
scf.yield %x : {ACC}
"""
    text = _loop(body).replace("(%q: ", f"(%bar: {BAR}, %q: ")
    out, report = sink_wgmma_waits_report(text, keep_releases=True)
    assert _body_ops(out) == [
        "ttng.warp_group_dot",
        "math.exp2",
        "wait(0)",
        "ttng.arrive_barrier",
        "math.exp2",
        "arith.addf",
        "scf.yield",
    ]
    assert (report.sunk, report.carried_releases, report.held_by_release) == (1, 0, 1)
    carried, report = sink_wgmma_waits_report(text)
    assert _body_ops(carried)[:4] == ["ttng.warp_group_dot", "math.exp2", "math.exp2", "wait(0)"]
    assert (report.carried_releases, report.held_by_release) == (1, 0)


def test_keep_releases_counts_only_waits_it_held_back():
    """A wait that would not have moved anyway (nothing but the release to pass before its
    reader) is not reported as held."""
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
ttng.arrive_barrier %bar, 1 : {BAR}
%x = arith.addf %w#0, %acc : {ACC}
scf.yield %x : {ACC}
"""
    text = _loop(body).replace("(%q: ", f"(%bar: {BAR}, %q: ")
    out, report = sink_wgmma_waits_report(text, keep_releases=True)
    assert out == sink_wgmma_waits(text) and report.held_by_release == 0


def test_wait_stops_at_a_reader_of_its_operands():
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
%e = math.exp2 %acc : {ACC}
%x = arith.addf %s, %e : {ACC}
scf.yield %x : {ACC}
"""
    ops = _body_ops(sink_wgmma_waits(_loop(body)))
    assert ops[:3] == ["ttng.warp_group_dot", "math.exp2", "wait(0)"]


def test_a_move_past_views_only_is_left_alone():
    body = f"""
{_dot("%s", "%init")}
{_wait("%w", "%s")}
%t = ttg.memdesc_trans %k {{order = array<i32: 1, 0>}} : {SMEM} -> {SMEM}
%x = arith.addf %w#0, %acc : {ACC}
scf.yield %x : {ACC}
"""
    text = _loop(body)
    out, report = sink_wgmma_waits_report(text)
    assert out == text and report.sunk == 0


def test_text_without_waits_is_returned_as_is():
    text = _loop(f"scf.yield %acc : {ACC}")
    assert sink_wgmma_waits(text) == text


# -- on a real kernel (Triton, CPU only) ----------------------------------------------------


@pytest.mark.triton
def test_attention_ahead_softmax_runs_under_the_next_score_wgmma():
    """In the compiled ahead kernel, the exp2s of this block's softmax sit between the wgmma
    of the next S and the wait that retires it, under a release that sinks waits in a kernel
    Triton did not warp-specialize (3.6); 3.9 keeps stock's waits there."""
    from tests.triton_util import compile_corpus_config
    from ws_solver.triton.toolchain import versions

    config = dict(
        HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False, AHEAD=True, num_warps=8, num_stages=3
    )
    ttgir = {
        overlap: compile_corpus_config("attention_fwd", config, "none", overlap_wgmma=overlap)
        for overlap in (False, True)
    }
    # Withheld (rewrites.overlap_contained) from one warp group (wrong O on the H100) and, without
    # stage releases to hold the waits, from 2 stages (a race on the H200).
    one_group = compile_corpus_config("attention_fwd", {**config, "num_warps": 4}, "none")
    two = compile_corpus_config(
        "attention_fwd", {**config, "num_stages": 2}, "none", release_per_warp_group=False
    )

    def between_dot_and_wait(text: str) -> int:
        body = text[text.index("scf.for") :]
        dot = re.search(r"ttng\.warp_group_dot %[\w.]+, .*isAsync", body)
        wait = body.index("ttng.warp_group_dot_wait", dot.end())
        return body[dot.end() : wait].count("math.exp2")

    assert between_dot_and_wait(ttgir[False]) == 0
    sinks = versions.installed().sinks_unspecialized_waits
    assert between_dot_and_wait(ttgir[True]) == (2 if sinks else 0)  # P and the rescale factor
    assert between_dot_and_wait(one_group) == between_dot_and_wait(two) == 0


# -- a property: sinking never lets a read or a release see a wgmma it did not see before ---------
BUFFERS = 3
STEP = st.one_of(
    st.tuples(st.just("dot"), st.integers(0, BUFFERS - 1)),
    st.tuples(st.just("wait"), st.integers(0, 3)),
    st.tuples(st.just("use"), st.integers(0, 3)),
    st.tuples(st.just("exp"), st.just(0)),
    st.tuples(st.just("store"), st.integers(0, BUFFERS - 1)),
    st.tuples(st.just("arrive"), st.integers(0, BUFFERS - 1)),
    st.tuples(st.just("barrier_wait"), st.integers(0, BUFFERS - 1)),
)


def _random_body(steps: list[tuple[str, int]]) -> str:
    """A loop body from `steps`; a wait names one earlier wgmma and retires it (and all
    older ones), a use reads one earlier wait's result."""
    lines, dots, waits = [], [], []
    for names, (kind, arg) in enumerate(steps):
        if kind == "dot":
            lines.append(_dot(f"%d{names}", "%init", b=f"%b{arg}"))
            dots.append((f"%d{names}", arg))
        elif kind == "wait" and dots:
            dot, buf = dots[min(arg, len(dots) - 1)]
            newer = len(dots) - 1 - dots.index((dot, buf))
            lines.append(
                f"%w{names}:2 = ttng.warp_group_dot_wait {dot}, %b{buf} "
                f"{{pendings = {newer} : i32}} : {ACC}, {SMEM}"
            )
            waits.append(f"%w{names}")
        elif kind == "use" and waits:
            wait = waits[min(arg, len(waits) - 1)]
            lines.append(f"%u{names} = arith.addf {wait}#0, %acc : {ACC}")
        elif kind == "exp":
            lines.append(f"%e{names} = math.exp2 %acc : {ACC}")
        elif kind == "store":
            lines.append(f"ttg.local_store %acc, %b{arg} : {ACC} -> {SMEM}")
        elif kind == "arrive":
            lines.append(f"ttng.arrive_barrier %bar{arg}, 1 : {BAR}")
        elif kind == "barrier_wait":
            lines.append(f"ttng.wait_barrier %bar{arg}, %c1 : {BAR}")
    lines.append(f"scf.yield %acc : {ACC}")
    args = ", ".join(
        [f"%b{i}: {SMEM}" for i in range(BUFFERS)] + [f"%bar{i}: {BAR}" for i in range(BUFFERS)]
    )
    return _loop("\n".join(lines)).replace("(%q: ", f"({args}, %q: ")


def _trace(text: str) -> list[tuple[str, frozenset]]:
    """Per side-effecting op or read, in order: (its text, the buffers in-flight wgmmas
    read there); a read also records whether its wgmma is still in flight."""
    module = ir.parse(text)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    in_flight: list[tuple[str, int]] = []
    waited: dict[str, str] = {}  # wait result name -> the wgmma it waited for
    out = []
    for op in loop.body.ops:
        text_of = module.op_text(op).split(" : ")[0]
        if op.name == DOT:
            in_flight.append((op.results[0].name, int(op.operands[1].name[2:])))
        elif op.name == WAIT:
            pend = op.attr("pendings")
            # (a wait allowing more pending wgmmas than are in flight retires none)
            in_flight = in_flight[max(0, len(in_flight) - pend) :] if pend else []
            waited[op.results[0].name.split("#")[0]] = op.operands[0].name
        elif op.name == "arith.addf":
            dot = waited[op.operands[0].name.split("#")[0]]
            out.append((text_of, frozenset({any(d == dot for d, _ in in_flight)})))
        elif op.name in ("ttg.local_store", "ttng.arrive_barrier", "ttng.wait_barrier"):
            out.append((text_of, frozenset(b for _, b in in_flight)))
    return out


def _releases_before(trace: list[tuple[str, frozenset]], read: str) -> set[str]:
    ops = [t for t, _ in trace]
    return {t for t in ops[: ops.index(read)] if t.startswith("ttng.arrive_barrier")}


@settings(max_examples=400, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=14), st.booleans())
# A release carried down with a wait passes a read of an earlier wait (found by hypothesis).
@example([("dot", 0), ("wait", 0), ("wait", 0), ("arrive", 0), ("use", 0)], False)
def test_sinking_keeps_every_read_and_write_safe(steps, keep_releases):
    text = _random_body(steps)
    before, after = _trace(text), _trace(sink_wgmma_waits(text, keep_releases))
    # Writes, releases and barrier waits keep their order; a release may only move later ...
    effects = [(t, seen) for t, seen in before if not t.startswith("%u")]
    effects_after = [(t, seen) for t, seen in after if not t.startswith("%u")]
    assert [t for t, _ in effects_after] == [t for t, _ in effects]
    for (op, seen_before), (_, seen_after) in zip(effects, effects_after, strict=True):
        if not op.startswith("ttng.wait_barrier"):  # (a barrier wait may overlap a wgmma)
            assert seen_after <= seen_before, op  # ... no write or release sees more wgmmas
    reads_after = {t: seen for t, seen in after if t.startswith("%u")}
    for op, _ in before:
        if op.startswith("%u"):
            assert reads_after[op] == frozenset({False}), op  # ... a read never sees its own
            assert _releases_before(after, op) <= _releases_before(before, op), op
    if keep_releases:  # ... and no release sees a different set of wgmmas in flight
        assert [e for e in after if e[0].startswith("ttng.arrive")] == [
            e for e in before if e[0].startswith("ttng.arrive")
        ]


@pytest.mark.triton
@pytest.mark.triton36
@pytest.mark.parametrize("per_warp_group", [False, True])
def test_specialized_ahead_consumer_overlaps_and_releases_no_stage_early(per_warp_group):
    """Triton's split of the ahead kernel, with the sinking. With partition-wide releases the
    softmax moves under the S wgmma together with the K stage release; with releases per
    warp group (the default) the release, and so the wait, stay where Triton put them. The
    Hopper fix's checker finds no stage released under an in-flight wgmma either way."""
    from corpus import kernels as corpus_kernels
    from tests.triton_util import compile_corpus_config
    from ws_solver.triton.rewrites.hopper import check_releases

    config = corpus_kernels.load("attention_fwd").CONFIGS["d128_m128n128_w8_s3_ahead"]
    ttgir = compile_corpus_config(
        "attention_fwd", config, "triton", release_per_warp_group=per_warp_group
    )
    assert "ttg.warp_specialize(" in ttgir
    default = ttgir[ttgir.index("default {") : ttgir.index("partition0(")]
    dot = default.index("isAsync = true")
    wait = default.index("ttng.warp_group_dot_wait", dot)
    assert default[dot:wait].count("math.exp2") == (0 if per_warp_group else 2)
    assert default[wait:].index("ttng.arrive_barrier") < default[wait:].index("ttng.wait_barrier")
    assert check_releases(ttgir) == []

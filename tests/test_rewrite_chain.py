"""The TTGIR rewrites of one chain share a parsed module: the same bytes as each rewrite on the
text the previous one printed, located, with fewer parses; register bounds come from the
Target."""

from __future__ import annotations

import pytest

from tests.test_hopper_fix import ATTENTION, GEMMS, _index, _lowered
from ws_solver import ir
from ws_solver.model.target import target_for
from ws_solver.triton.rewrites import chain
from ws_solver.triton.rewrites.hopper import fix_async_wgmma_release_report
from ws_solver.triton.rewrites.overlap import sink_wgmma_waits_report

PLAN = ((0, 230), (1, 20))  # the producer's 20 raised to the minimum, 24


def _one_by_one(text: str, requests: chain.RegisterRequests, keep_releases: bool | None) -> str:
    """The chain as it ran before: each rewrite parses what the previous one printed (no
    wait sinking where `keep_releases` is None: the chain withholds it)."""
    module = ir.parse(text)
    chain.apply_register_requests(module, requests, target_for(90))
    text = module.print()
    if keep_releases is not None:
        text, _ = sink_wgmma_waits_report(text, keep_releases)
    return fix_async_wgmma_release_report(text)[0]


@pytest.mark.parametrize("case", [*ATTENTION, GEMMS[0], GEMMS[1]])
def test_the_chain_gives_the_bytes_of_the_rewrites_one_by_one(case, monkeypatch):
    lowered, _ = _lowered(case)
    entry = _index()[f"{case}.sm90.ttgir"]
    warps = entry["num_warps"]
    requests = (PLAN,) * len(chain.lowered_ops(ir.parse(lowered), warps))
    post = chain.post_pipeline(90, warps, requests, True, True, chain.hopper_fix(), True, None)
    assert [r.name for r in post.rewrites] == ["registers", "overlap", "hopper"]
    sinking = post.rewrites[1]
    keep = sinking.keep_releases if isinstance(sinking, chain.SinkWgmmaWaits) else None
    assert (keep is None) == (warps == 4)  # one warp group: withheld (overlap_contained)
    parses = []
    real_parse = ir.parse
    monkeypatch.setattr(ir, "parse", lambda text: parses.append(1) or real_parse(text))
    out = post(lowered)
    chain_parses = len(parses)
    # located as the lowering would locate it (it then parses the text no more)
    assert post.located
    assert out == ir.located_text(ir.parse(_one_by_one(lowered, requests, keep)))
    assert post.registers_applied == [[24]] * len(requests)
    assert "requestedRegisters = array<i32: 24>" in out
    # one parse, one more after each rewrite that moved ops, and never more than before
    overlap, hopper = post.results["overlap"].detail, post.results["hopper"].detail
    moved = (keep is not None and overlap.sunk > 0) + (hopper.deferred + hopper.moved > 0)
    assert chain_parses == 1 + moved
    assert chain_parses < len(parses) - chain_parses


def test_op_text_carries_the_attribute_edits():
    text = "%0 = arith.constant 0 : i32\n%1 = arith.constant {a = 1 : i32} 1 : i32\n"
    module = ir.parse(text)
    first, second = module.ops
    second.set_attr("a", "2 : i32")
    assert module.op_text(second) == "%1 = arith.constant {a = 2 : i32} 1 : i32"
    assert not module.spliced
    module.move_before(second, first)
    assert module.spliced
    moved = "%1 = arith.constant {a = 2 : i32} 1 : i32\n%0 = arith.constant 0 : i32\n"
    assert module.print() == moved


def test_register_requests_are_legal_setmaxnreg_counts_of_the_target():
    target = target_for(90)
    assert [target.setmaxnreg_for(r) for r in (1, 24, 25, 232, 240, 255, 300)] == [
        24,
        24,
        32,
        232,
        240,
        256,
        256,
    ]


def test_a_chain_with_nothing_to_do_parses_nothing(monkeypatch):
    text = "%0 = arith.constant 0 : i32\n"
    monkeypatch.setattr(ir, "parse", lambda text: pytest.fail("parsed"))
    post = chain.post_pipeline(90, 4, (), True, True, chain.hopper_fix(), True, 3)
    assert post(text) == text
    assert post.lowered == [] and post.ring_depth is None and post.notes == []
    assert not post.located  # the lowering locates it (parse_module_text)

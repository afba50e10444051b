"""The wgmma wait sinking is withheld from one-warp-group kernels (wrong results on the
H100), from 2-stage loops without stage releases (a race on the H200) and, under Triton 3.9,
from kernels Triton did not warp-specialize (slower than stock's on the H100), and kept where
it was measured right, deterministic and faster."""

import pytest

from tests.test_overlap import SOFTMAX_AHEAD
from ws_solver.core.triton_releases import RELEASES
from ws_solver.triton.rewrites.chain import (
    ONE_WARP_GROUP,
    OVERLAP_CONTAINED,
    UNSPECIALIZED_KEPT,
    SinkWgmmaWaits,
    Ttgir,
    Withheld,
    overlap_contained,
    post_pipeline,
)


def kinds(stages, num_warps=4, releases=True):
    post = post_pipeline(90, num_warps, (), True, True, None, releases, stages)
    return [type(r) for r in post.rewrites]


def test_one_warp_group_kernels_keep_their_waits_at_every_stage_count():
    for stages in (2, 3, 4, None):
        assert Withheld in kinds(stages) and SinkWgmmaWaits not in kinds(stages)
        assert overlap_contained(4, stages, keep_releases=False) == ONE_WARP_GROUP


def test_two_warp_groups_sink_unless_two_stages_have_no_release_to_hold_them():
    assert SinkWgmmaWaits in kinds(2, num_warps=8)  # two warp groups keep their releases
    assert SinkWgmmaWaits in kinds(3, num_warps=8, releases=False)
    assert SinkWgmmaWaits in kinds(None, num_warps=8, releases=False)  # stages unknown
    assert Withheld in kinds(2, num_warps=8, releases=False)
    assert overlap_contained(8, 2, keep_releases=False) == OVERLAP_CONTAINED
    assert overlap_contained(8, 3, keep_releases=False) is None


def test_the_overlap_switched_off_is_not_reported_as_withheld():
    post = post_pipeline(90, 4, (), True, False, None, True, 3)
    assert not any(isinstance(r, (Withheld, SinkWgmmaWaits)) for r in post.rewrites)


def test_withheld_rewrite_leaves_the_module_and_says_so():
    text = (
        "%a = arith.constant dense<0.0> : tensor<4xf32>\n"
        "%0 = ttng.warp_group_dot_wait %a {pendings = 0 : i32} : tensor<4xf32>\n"
    )
    source = Ttgir(text)
    result = Withheld("overlap", OVERLAP_CONTAINED).apply(source)
    assert result.out is source and result.out.print() == text
    assert result.notes == (OVERLAP_CONTAINED,)
    no_wait = Ttgir("%0 = arith.constant 0 : i32\n")
    assert Withheld("overlap", OVERLAP_CONTAINED).apply(no_wait).notes == ()


EMPTY_WARP_SPECIALIZE = """\
    ttg.warp_specialize()
    default {
      ttg.warp_yield
    }
    partition0() num_warps(4) {
      ttg.warp_return
    } : () -> ()
"""


def _sinks(text, release):
    """Whether the post-pipeline stage of an 8-warp 3-stage sm_90 kernel under `release` moves
    a wait of `text`, and its notes."""
    sink = RELEASES[release].sinks_unspecialized_waits
    post = post_pipeline(90, 8, (), True, True, None, False, 3, sink_unspecialized=sink)
    overlap = next(r for r in post.rewrites if isinstance(r, SinkWgmmaWaits))
    result = overlap.apply(Ttgir(text))
    return result.detail.sunk > 0, result.notes


def test_an_unspecialized_kernel_keeps_stocks_waits_under_triton_39_only():
    moved, notes = _sinks(SOFTMAX_AHEAD, "3.6.0")
    assert moved and notes and notes[0].startswith("wgmma overlap: 1 wait(s) sunk")
    moved, notes = _sinks(SOFTMAX_AHEAD, "3.9.0")
    assert not moved and notes == (UNSPECIALIZED_KEPT,)


@pytest.mark.parametrize("release", ["3.6.0", "3.9.0"])
def test_a_warp_specialized_kernel_sinks_under_both_releases(release):
    # an (empty) warp_specialize op beside the loop: what makes the kernel specialized
    text = SOFTMAX_AHEAD.replace(
        "    %c1 = arith.constant", EMPTY_WARP_SPECIALIZE + "    %c1 = arith.constant", 1
    )
    moved, _ = _sinks(text, release)
    assert moved


def test_the_installed_release_decides_when_not_told(monkeypatch):
    from ws_solver.triton.toolchain import versions

    for release in ("3.6.0", "3.9.0"):
        monkeypatch.setattr(versions, "installed", lambda release=release: RELEASES[release])
        post = post_pipeline(90, 8, (), True, True, None, False, 3)
        overlap = next(r for r in post.rewrites if isinstance(r, SinkWgmmaWaits))
        assert overlap.unspecialized == RELEASES[release].sinks_unspecialized_waits

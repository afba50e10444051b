"""The wgmma wait sinking is withheld from 2-stage loops without stage releases (a race on
the H200), and kept where it was measured deterministic."""

from ws_solver.triton.rewrites.chain import (
    OVERLAP_CONTAINED,
    SinkWgmmaWaits,
    Ttgir,
    Withheld,
    overlap_contained,
    post_pipeline,
)


def kinds(stages, num_warps=4, releases=True):
    post = post_pipeline(90, num_warps, (), True, True, None, releases, stages)
    return [type(r) for r in post.rewrites]


def test_two_stage_one_warp_group_loops_keep_their_waits():
    assert Withheld in kinds(2) and SinkWgmmaWaits not in kinds(2)
    assert overlap_contained(2, keep_releases=False)


def test_three_stages_or_releases_kept_sink_as_before():
    assert SinkWgmmaWaits in kinds(3)
    assert SinkWgmmaWaits in kinds(2, num_warps=8)  # two warp groups keep their releases
    assert Withheld in kinds(2, num_warps=8, releases=False)
    assert SinkWgmmaWaits in kinds(None)  # stages unknown: as before


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

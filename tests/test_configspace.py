"""The generated config space (corpus/configspace.py): deterministic, filtered by shared memory,
naming as the hand-picked configs, and its committed CI-slice dumps build loop graphs."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from corpus import configspace as cs
from corpus import kernels as corpus_kernels
from ws_solver import ir
from ws_solver.model.dfg import build_graph, ws_loops

SLICE_DIRS = sorted((Path(cs.__file__).parent / "configspace").glob("ttgir-*"))
_TILE = r"t(64|128)x(128|256)x(64|128)_w[48]_s[234]"
_PERSISTENT = r"t(64|128)x(128|256)x(64|128)_(relu|gelu)(_flat)?_w[48]_s[234]"
_ATTENTION = r"(causal_)?d(64|128)_m(64|128)n(64|128)_w[48]_s[234](_ahead)?"
NAME = {
    "gemm_tma": _TILE,
    "gemm_tma_indesc": _TILE,
    "gemm_pointer": _TILE,
    "gemm_fp8": _TILE,
    "gemm_fp8_indesc": _TILE,
    "gemm_fp8_pointer": _TILE,
    "gemm_persistent": _PERSISTENT,
    "gemm_persistent_indesc": _PERSISTENT,
    "gemm_persistent_pointer": _PERSISTENT,
    "attention_fwd": _ATTENTION,
    "attention_fwd_indesc": _ATTENTION,
    "attention_fwd_pointer": _ATTENTION,
}
# Each family's three forms: descriptors from the host, made in the kernel, pointer loads.
FORMS = {
    "gemm_tma": ("gemm_tma", "gemm_tma_indesc", "gemm_pointer"),
    "gemm_fp8": ("gemm_fp8", "gemm_fp8_indesc", "gemm_fp8_pointer"),
    "gemm_persistent": ("gemm_persistent", "gemm_persistent_indesc", "gemm_persistent_pointer"),
    "attention_fwd": ("attention_fwd", "attention_fwd_indesc", "attention_fwd_pointer"),
}


def test_space_is_deterministic_and_named() -> None:
    first, second = cs.space(), cs.space()
    assert first == second
    keys = [e.key for e in first]
    assert len(keys) == len(set(keys))
    assert {e.family for e in first} == set(cs.FAMILIES)
    for e in first:
        assert re.fullmatch(NAME[e.family], e.name), e.key
    assert len(first) >= 1000  # every one is an sm_90 and an sm_100 config


def test_space_is_filtered_by_shared_memory() -> None:
    for family in cs.FAMILIES:
        kept = {e.name for e in cs.space(family)}
        grid = cs.unfiltered(family)
        for name, config in grid.items():
            assert (name in kept) == (cs.smem_estimate(family, config) <= cs.SMEM_LIMIT)
    assert cs.SMEM_LIMIT < 228 * 1024
    names = {e.key for e in cs.space()}
    # 3 × (128×128 + 256×128) × 2 B = 288 KB of fp16 stages: does not fit
    assert "gemm_tma.t128x256x128_w8_s3" not in names
    assert "gemm_fp8.t128x256x128_w8_s3" in names  # the same tile in fp8: 144 KB
    # the persistent epilogue tile is live with the stages (in the tile loop)
    assert (
        cs.gemm_smem("gemm_persistent", cs.unfiltered("gemm_persistent")["t128x256x64_relu_w8_s3"])
        == 3 * (128 * 64 + 256 * 64) * 2 + 3 * cs.BARRIER_BYTES + 128 * 256 * 2
    )


def test_reference_configs_match_and_stay_untouched() -> None:
    before = {f: copy.deepcopy(corpus_kernels.load(f).CONFIGS) for f in cs.FAMILIES}
    entries = cs.space()
    by_key = {e.key: e.config for e in entries}
    shared = 0
    for family, configs in before.items():
        for name, config in configs.items():
            if f"{family}.{name}" in by_key:
                shared += 1
                assert by_key[f"{family}.{name}"] == config, name
    assert shared >= 8  # the generator names the hand-picked tiles as they are named
    assert {f: corpus_kernels.load(f).CONFIGS for f in cs.FAMILIES} == before


def test_forms_share_grid_filter_and_slice() -> None:
    """A family's three forms: the same grid, the same shared-memory verdicts, the same CI
    tiles; FORMS names the form of each family."""
    for host, indesc, pointer in FORMS.values():
        forms = (cs.FORMS[host], cs.FORMS[indesc], cs.FORMS[pointer])
        assert forms == ("host", "kernel", "pointer")
        grids = [cs.unfiltered(f) for f in (host, indesc, pointer)]
        assert grids[0] == grids[1] == grids[2]
        kept = [[e.name for e in cs.space(f)] for f in (host, indesc, pointer)]
        assert kept[0] == kept[1] == kept[2]
        assert cs.CI_SLICE[host] == cs.CI_SLICE[indesc] == cs.CI_SLICE[pointer]
    assert {f for forms in FORMS.values() for f in forms} == set(cs.FAMILIES)


def test_ci_slice() -> None:
    ci = cs.ci_slice()
    assert 40 <= len(ci) <= 50
    assert {e.family for e in ci} == set(cs.FAMILIES)
    assert {e.config["num_warps"] for e in ci} == {4, 8}
    assert {e.config["num_stages"] for e in ci} >= {2, 3, 4}
    four_warp_wide = [
        e for e in ci if e.config["num_warps"] == 4 and e.config.get("BLOCK_N") == 256
    ]
    assert {e.family for e in four_warp_wide} == set(cs.FAMILIES) - set(FORMS["attention_fwd"])
    for family in FORMS["attention_fwd"]:
        assert {e.config["CAUSAL"] for e in ci if e.family == family} == {False, True}
    assert [e.key for e in cs.select("ci", "gemm_fp8")] == [
        e.key for e in ci if e.family == "gemm_fp8"
    ]


def test_interleaved_covers_families_early() -> None:
    order = cs.interleaved(cs.space())
    assert sorted(e.key for e in order) == sorted(e.key for e in cs.space())
    assert {e.family for e in order[: len(cs.FAMILIES)]} == set(cs.FAMILIES)
    sample = cs.sample_order(cs.space())
    assert sample == cs.sample_order(list(reversed(cs.space())))
    assert sorted(e.key for e in sample) == sorted(e.key for e in cs.space())
    assert {e.family for e in sample[: len(cs.FAMILIES)]} == set(cs.FAMILIES)
    # a prefix is spread: both warps counts and BLOCK_M 64 among the first 40
    assert {e.config["num_warps"] for e in sample[:40]} == {4, 8}
    assert 64 in {e.config["BLOCK_M"] for e in sample[:40]}


def test_committed_index_is_current() -> None:
    committed = json.loads(cs.INDEX_FILE.read_text())
    fresh = cs.index(committed.get("compile_check", {}))
    assert committed == json.loads(json.dumps(fresh))
    assert committed["total"] == len(cs.space())


def test_extra_configs_round_trip() -> None:
    extra = cs.extra_configs(cs.ci_slice())
    assert sum(len(v) for v in extra.values()) == len(cs.ci_slice())
    assert extra["gemm_tma"]["t128x256x64_w4_s3"]["num_warps"] == 4


def test_slice_dumps_cover_the_slice() -> None:
    assert [d.name for d in SLICE_DIRS] == ["ttgir-3.6", "ttgir-3.9"]
    want = {f"{e.key}.{t}.ttgir" for e in cs.ci_slice() for t in cs.TARGETS}
    for folder in SLICE_DIRS:
        index = json.loads((folder / "index.json").read_text())
        assert index["failed"] == []
        assert {d["file"] for d in index["dumps"]} == want
        assert {p.name for p in folder.glob("*.ttgir")} == want


@pytest.mark.parametrize("folder", SLICE_DIRS, ids=lambda p: p.name)
def test_slice_dumps_build_loop_graphs(folder: Path) -> None:
    index = json.loads((folder / "index.json").read_text())
    for entry in index["dumps"]:
        text = (folder / entry["file"]).read_text()
        assert "/work/" not in text and "site-packages" not in text, entry["file"]
        module = ir.parse(text)
        loops = ws_loops(module)
        assert len(loops) == entry["ws_loops"] >= 1, entry["file"]
        for loop in loops:
            graph = build_graph(module, loop)
            assert graph.nodes, entry["file"]
            assert graph.num_warps == entry["num_warps"]


def test_no_causal_tiles_the_kernel_computes_wrongly() -> None:
    # attention_fwd's causal loops step over keys in BLOCK_N blocks up to a multiple of
    # BLOCK_M: with BLOCK_M < BLOCK_N a block straddles the diagonal unmasked.
    grid = cs.unfiltered("attention_fwd")
    causal = [c for c in grid.values() if c["CAUSAL"]]
    assert causal and all(c["BLOCK_M"] >= c["BLOCK_N"] for c in causal)
    assert any(c["BLOCK_M"] < c["BLOCK_N"] for c in grid.values() if not c["CAUSAL"])
    assert not cs.causal_blocks_supported(True, 64, 128)
    assert cs.causal_blocks_supported(True, 128, 64) and cs.causal_blocks_supported(False, 64, 128)
    names = {e.name for e in cs.space("attention_fwd")}
    assert "causal_d64_m64n128_w4_s2" not in names and "d64_m64n128_w4_s2" in names


def test_pruned_check_counts_only_the_space_now() -> None:
    f, g = "gemm_tma", "gemm_fp8"  # rows are per family
    check = {
        "3.6.0": {
            "sm90": {
                f: {"ok": 3, "failed": {f"{f}.c": "boom"}},
                g: {"ok": 1, "failed": {}},
                "gone": {"ok": 1, "failed": {}},
            }
        }
    }
    checked = {f: {f"{f}.{n}" for n in "abcd"}, g: {f"{g}.a"}, "gone": {"gone.a"}}
    pruned = cs.prune_check(check, checked, {f"{f}.a", f"{f}.c", f"{g}.a"})
    assert pruned == {
        "3.6.0": {"sm90": {f: {"ok": 1, "failed": {f"{f}.c": "boom"}}, g: {"ok": 1, "failed": {}}}}
    }
    keys = {f"{f}.a", f"{f}.b", f"{f}.d"}
    assert cs.prune_check(check, checked, keys)["3.6.0"]["sm90"][f] == {"ok": 3, "failed": {}}
    # a row that did not cover its family's committed list is not guessed at; the others stay
    checked[f] |= {f"{f}.e"}
    assert cs.prune_check(check, checked, {f"{f}.a", f"{g}.a"}) == {
        "3.6.0": {"sm90": {g: {"ok": 1, "failed": {}}}}
    }


def test_committed_check_covers_every_family() -> None:
    """The committed `check`: under each Triton version and target a row per family, its
    count the family's configs, none failed."""
    committed = json.loads(cs.INDEX_FILE.read_text())["compile_check"]
    counts = {f: len(cs.space(f)) for f in cs.FAMILIES}
    assert set(committed) == {"3.6.0", "3.9.0"}
    for version, targets in committed.items():
        assert set(targets) == set(cs.TARGETS), version
        for target, rows in targets.items():
            assert set(rows) == set(cs.FAMILIES), (version, target)
            for family, row in rows.items():
                assert (row["ok"], row["failed"]) == (counts[family], {}), (version, target, family)


def _slice_texts(form: str):
    for folder in SLICE_DIRS:
        index = json.loads((folder / "index.json").read_text())
        for entry in index["dumps"]:
            if cs.FORMS[entry["kernel"]] == form:
                yield entry, (folder / entry["file"]).read_text()


def test_slice_dumps_show_each_form() -> None:
    """Descriptors made in the kernel stay `tt.make_tensor_descriptor` ops in the dumps (three
    per GEMM, four per attention kernel, loads through them); host descriptors arrive as
    `!tt.tensordesc` arguments; pointer forms load through no descriptor at all."""
    seen = {"host": 0, "kernel": 0, "pointer": 0}
    for form in seen:
        for entry, text in _slice_texts(form):
            seen[form] += 1
            made = len(re.findall(r"= tt\.make_tensor_descriptor ", text))
            loads = len(re.findall(r"tt\.descriptor_load ", text))
            if form == "kernel":
                want = 4 if entry["kernel"].startswith("attention") else 3
                assert made == want and loads >= 2, entry["file"]
            elif form == "host":
                assert made == 0 and loads >= 2 and "tt.func public" in text, entry["file"]
                assert re.search(r"tt\.func public @\w+\(%[\w.]+: !tt\.tensordesc", text)
            else:
                assert made == 0 and loads == 0 and "tensordesc" not in text, entry["file"]
                assert "tt.load " in text, entry["file"]
    per_version = {"kernel": 14, "pointer": 14, "host": 14}  # 3 + 3 + 4 + 4 CI configs
    for form, n in per_version.items():
        assert seen[form] == n * 2 * len(SLICE_DIRS), form

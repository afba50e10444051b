"""benchmarks/cpu/pair_mapping.py: a minimal pair probed on one Triton version is lowered on
another version's corpus only where the loop graph is the same, with its labels carried over
node by node, and it breaks the same rules there (no Triton needed)."""

from __future__ import annotations

import json

import pytest

mapping = pytest.importorskip("benchmarks.cpu.pair_mapping")
probe = pytest.importorskip("benchmarks.cpu.lowering_probe")

ROOT = mapping.REPO_ROOT
CORPUS_36 = ROOT / "corpus" / "ttgir"
CORPUS_39 = ROOT / "corpus" / "ttgir-3.9"
PAIRS = json.loads(probe.PAIRS.read_text())


def test_a_pair_of_the_installed_version_is_lowered_where_it_was_probed() -> None:
    for pair in PAIRS:
        version = pair.get("triton", mapping.PROBED_ON)
        corpus = CORPUS_39 if version == "3.9.0" else CORPUS_36
        where = mapping.resolve(pair, corpus, version)
        assert where.path == mapping.source_path(pair) and where.pair is pair


def test_pairs_of_other_kernels_are_skipped_with_the_reason() -> None:
    """The archived attention TTGIR (pair 0) is not the 3.9 dump's kernel: 33 nodes, not 34."""
    why = mapping.resolve(PAIRS[0], CORPUS_39, "3.9.0")
    assert isinstance(why, str)
    assert "2026-11-29-ttgir-attention" in why and "33 nodes against 34" in why


def test_labels_carry_over_to_the_same_nodes() -> None:
    """Pair 2 (R3): the moved `tt.load` is the same node of 3.9's dump, under 3.9's name."""
    pair = PAIRS[2]
    where = mapping.resolve(pair, CORPUS_39, "3.9.0")
    assert where.path == CORPUS_39 / pair["file"] and where.mapped_from is not None
    (before,) = mapping.loop_graphs(mapping.source_path(pair))
    (after,) = mapping.loop_graphs(where.path)
    old, new = pair["change"][1], where.pair["change"][1]
    assert old != new
    (old_id,) = [n.id for n in before.nodes if n.label == old]
    (new_id,) = [n.id for n in after.nodes if n.label == new]
    assert old_id == new_id and after.nodes[new_id].op_name == "tt.load"
    assert len(where.pair["loops"][0]["assign"]) == len(pair["loops"][0]["assign"])


def test_carried_pairs_break_the_same_rules() -> None:
    """Every pair that carries over to the other version's dump breaks the same rules there
    (the reference checker), as given and with its change."""
    carried = 0
    for pair in PAIRS:
        version = pair.get("triton", mapping.PROBED_ON)
        other, corpus = ("3.6.0", CORPUS_36) if version == "3.9.0" else ("3.9.0", CORPUS_39)
        where = mapping.resolve(pair, corpus, other)
        if isinstance(where, str):
            continue
        carried += 1
        cap = 90 if pair["file"].endswith(".sm90.ttgir") else 100
        rules = []
        for spec_pair, path in ((pair, mapping.source_path(pair)), (where.pair, where.path)):
            graphs = mapping.loop_graphs(path)
            index = spec_pair.get("loop", 0)
            for change in (None, spec_pair["change"]):
                plan = probe.plan_from_spec(graphs[index], spec_pair["loops"][index], change)
                rules.append(probe.rule_violations(graphs[index], plan, cap))
        assert rules[:2] == rules[2:], pair["file"]
    assert carried >= 12

"""Stock Triton's decision, recorded with the corpus dumps (corpus/stock.py) and read for
`compare` (ws_solver.pipeline.stock, comparison.attach_stock)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.model.dfg import ws_loops
from ws_solver.pipeline.comparison import attach_stock, decided_specialized
from ws_solver.pipeline.stock import (
    FAILS,
    SPECIALIZED,
    UNKNOWN,
    UNSPECIALIZED,
    StockDecision,
    digest,
    index_entries,
    loop_stock,
    recorded,
    stock_summary,
)

REPO = Path(__file__).resolve().parent.parent
# Each dump folder and the Triton release its dumps (and stock's builds) are for.
FOLDERS = {
    REPO / "corpus" / "ttgir": "3.6",
    REPO / "corpus" / "ttgir-3.9": "3.9",
    REPO / "corpus" / "configspace" / "ttgir-3.6": "3.6",
    REPO / "corpus" / "configspace" / "ttgir-3.9": "3.9",
}


@pytest.mark.parametrize("folder", list(FOLDERS), ids=lambda p: str(p.relative_to(REPO)))
def test_every_committed_dump_has_stocks_decision(folder: Path) -> None:
    entries = index_entries(folder)
    assert entries and {p.name for p in folder.glob("*.ttgir")} == set(entries)
    for name, entry in entries.items():
        text = (folder / name).read_text()
        found = recorded(folder / name, text)
        assert found is not None, name
        assert found.triton.startswith(FOLDERS[folder] + "."), name
        assert found.target == entry["target"], name
        if found.error:
            assert not found.loops and "\n" not in found.error, name
        else:
            assert len(found.loops) == len(ws_loops(ir.parse(text))) == entry["ws_loops"], name
            assert sum(x is True for x in found.loops) <= found.warp_specialize_ops, name


def test_an_edited_or_unindexed_file_has_no_stock_decision(tmp_path: Path) -> None:
    dump = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
    text = dump.read_text()
    assert recorded(dump, text) is not None
    assert recorded(dump, text + "\n") is None  # not the recorded text
    copy = tmp_path / dump.name
    shutil.copy(dump, copy)
    assert recorded(copy, text) is None  # no index beside it
    (tmp_path / "index.json").write_text("not json")
    assert recorded(copy, text) is None


def test_decision_words_and_where_ours_differs() -> None:
    found = StockDecision("3.6.0", "sm90", (True, False, None), dump_sha256=digest("x"))
    assert [found.decision(i) for i in range(4)] == [
        SPECIALIZED,
        UNSPECIALIZED,
        UNKNOWN,
        UNKNOWN,
    ]
    assert loop_stock(found, 0, ours_specialized=False)["differs"] is True
    assert loop_stock(found, 1, ours_specialized=False)["differs"] is False
    assert loop_stock(found, 2, ours_specialized=True)["differs"] is None
    assert loop_stock(None, 0, True) == {"decision": UNKNOWN, "differs": None}
    failing = StockDecision("3.9.0", "sm100", error="RuntimeError: boom")
    cell = loop_stock(failing, 0, True)
    assert cell["decision"] == FAILS and cell["reason"] == "RuntimeError: boom"
    assert cell["differs"] is None
    assert StockDecision.from_dict(found.to_dict()) == found
    assert StockDecision.from_dict(failing.to_dict()) == failing


def _record(file: str, h: bool, o: bool, departs: bool) -> dict:
    decision = "optimum" if departs else "heuristic kept"
    return {
        "file": file,
        "loop": 0,
        "heuristic": {"specialized": h},
        "optimal": {"specialized": o, "departure": {"decision": decision}},
    }


def test_attach_stock_compares_the_optimal_strategys_decision() -> None:
    ws = StockDecision("3.6.0", "sm90", (True,))
    records = [
        _record("a", h=False, o=True, departs=True),  # ours specializes, as stock
        _record("b", h=False, o=True, departs=False),  # heuristic kept: ours does not
        _record("c", h=True, o=True, departs=False),
        _record("d", h=True, o=True, departs=True),
    ]
    assert [decided_specialized(r) for r in records] == [True, False, True, True]
    failing = StockDecision("3.6.0", "sm90", error="x")
    attach_stock(records, {"a": ws, "b": ws, "c": failing})
    assert [r["stock"]["differs"] for r in records] == [False, True, None, None]
    summary = stock_summary([r["stock"] for r in records])
    assert summary == {
        "loops": 4,
        "known": 2,
        "specialized": 2,
        "fails": 1,
        "unknown": 1,
        "differs": 1,
        "ours_only": 0,
        "stock_only": 1,
        "recorded_for": ["3.6.0 sm90"],
    }


@pytest.mark.triton
def test_a_record_is_what_stock_triton_builds_now() -> None:
    """One committed record made again: the installed Triton compiles the kernel as stock
    would (CPU, to ptxas) and reads its decision from the result."""
    import triton

    from corpus import dump as corpus_dump
    from corpus import stock as corpus_stock

    folder = next(f for f, v in FOLDERS.items() if triton.__version__.startswith(v + "."))
    name = "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
    entry = index_entries(folder)[name]
    job = corpus_dump.Job(entry["kernel"], entry["config"], entry["target"])
    text = (folder / name).read_text()
    assert corpus_stock.stock_record(job, text) == entry["stock"]
    assert entry["stock"]["loops"] == [True]  # stock specializes it on sm_100
    # the dump itself, before warp specialization, has no ttg.warp_specialize op
    assert corpus_stock.stock_loops(text, text) == ((False,), 0)


def test_loc_chain_follows_call_sites() -> None:
    from corpus.stock import loc_chain

    aliases = {
        "#loc1": 'loc("k.py":52:20)',
        "#loc2": 'loc("k.py":128:9)',
        "#loc3": "loc(callsite(#loc1 at #loc2))",
    }
    assert loc_chain("loc(#loc3)", aliases) == ("k.py:52:20", "k.py:128:9")
    assert loc_chain("loc(#loc9)", aliases) == ()


def test_compare_index_formats(tmp_path: Path) -> None:
    entry = {"file": "a.ttgir", "stock": {"triton": "3.6.0", "target": "sm90"}}
    (tmp_path / "index.json").write_text(json.dumps([entry]))
    assert index_entries(tmp_path) == {"a.ttgir": entry}
    (tmp_path / "index.json").write_text(json.dumps({"dumps": [entry], "failed": []}))
    assert index_entries(tmp_path) == {"a.ttgir": entry}

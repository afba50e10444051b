"""The planner's input of a drop-in compile is parsed once (ws_solver.triton.dropin.
planner_input): the loops' sites, the check of the planner's output and every planning read
that one parse, and the annotated text goes to the lowering known to be located."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.pipeline.partition import partition_text
from ws_solver.triton.dropin import records
from ws_solver.triton.dropin.partition_check import check_partitioned
from ws_solver.triton.dropin.planner_input import PlannerInput

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"


def _plans(reports) -> list[dict]:
    return [{**r.to_dict(), "wall_s": None} for r in reports]


@pytest.fixture
def parses(monkeypatch) -> Counter:
    """How often each text was parsed."""
    counted: Counter = Counter()
    real = ir.parse

    def parse(text):
        counted[text] += 1
        return real(text)

    monkeypatch.setattr(ir, "parse", parse)
    return counted


def test_one_parse_serves_the_sites_the_check_and_every_planning(parses) -> None:
    text = GEMM.read_text()
    expected = []
    for strategy in ("heuristic", "none", "heuristic"):
        annotated, reports = partition_text(text, strategy)
        checked = check_partitioned(text, annotated, reports)
        expected.append((strategy, annotated, reports, checked))
    sites = records.loop_sites(text)
    parses.clear()
    given = PlannerInput(text)
    assert given.sites == sites and text in given.located
    for strategy, annotated, reports, checked in expected:
        with given.lent() as module:
            assert module is not None
            out, said = partition_text(text, strategy, module=module)
        assert out == annotated and _plans(said) == _plans(reports)
        assert given.check(out, said) == checked
        assert out in given.located
    assert parses[text] == 1  # the check parses the outputs, nothing parses the input again
    with given.lent() as module:
        assert module is not None and module.print() == text


def test_a_planning_that_does_not_return_keeps_the_module(parses) -> None:
    text = GEMM.read_text()
    given = PlannerInput(text)
    with pytest.raises(RuntimeError), given.lent() as module:
        assert module is not None
        partition_text(text, "heuristic", module=module)
        raise RuntimeError("out of time")
    with given.lent() as module:
        assert module is None  # the planning's thread may still hold it: parse the text
    out, _ = partition_text(text, "none")
    assert given.check(out) == [False]
    assert parses[text] == 2


def test_a_text_the_reader_refuses_meets_each_reader_as_before() -> None:
    text = GEMM.read_text()
    cut = text[: text.rindex("#loc")]
    given = PlannerInput(cut)
    assert given.sites == records.loop_sites(cut) and not given.located
    with given.lent() as module:
        assert module is None
    with pytest.raises(ir.ParseError):
        given.check(text)
    nothing = PlannerInput(None)
    assert nothing.sites == [] and nothing.text == ""

"""Generated input for what reads files ws_solver did not necessarily write (issue 36): the
TTGIR reader, the plan-cache loader (`plancache.get` + `planrecord.decode`) and the
tune-cache loader (`tunecache.load` + `tunecache.check`). Each either answers or raises its
one documented error; nothing else escapes, and what is accepted is consistent. Derandomized
and small: well under a minute (the long reader fuzz is test_ir_fuzz.py, marked slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ws_solver import ir
from ws_solver.model.check import check_plan
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.target import target_for
from ws_solver.pipeline import plancache, planrecord
from ws_solver.pipeline.partition import SolveOptions, plan_loop
from ws_solver.triton.autotuning import tunecache

REPO = Path(__file__).resolve().parent.parent
GEMM = REPO / "corpus" / "ttgir" / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir"
TEXT = GEMM.read_text()
FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def loop():
    module = ir.parse(TEXT)
    graph = build_graph(module, ws_loops(module)[0])
    target = target_for("sm_90")
    plan, reason, details = plan_loop(graph, target, "heuristic", SolveOptions(cache=False))
    return graph, target, plan, reason, details


# -- the TTGIR reader ---------------------------------------------------------------------------
@FUZZ
@given(data=st.data())
def test_reader_on_cut_and_spliced_text(data) -> None:
    start = data.draw(st.integers(0, len(TEXT)))
    end = data.draw(st.integers(start, min(len(TEXT), start + 400)))
    insert = data.draw(st.text(alphabet='{}()[]<>%#^@!"=:,.-> \n\tx0_\x00é', max_size=20))
    text = TEXT[:start] + insert + TEXT[end:]
    try:
        module = ir.parse(text)
    except ir.ParseError as e:
        assert 1 <= e.line <= text.count("\n") + 1 and e.column >= 1
        return
    assert module.print() == text


# -- the plan-cache loader ----------------------------------------------------------------------
def _decode_or_refuse(text, graph, target) -> None:
    try:
        plan, reason, details = planrecord.decode(text, graph, target, KEY)
    except planrecord.BadRecord as e:
        assert str(e) and "\n" not in str(e)
        return
    assert planrecord.shape_problem(plan, graph, target) == ""
    assert isinstance(reason, str) and isinstance(details, dict)
    json.loads(text)  # only a JSON record is accepted
    assert isinstance(check_plan(plan, graph, target), list)


KEY = "f" * 64  # the cache key the records here are stored under
FIELDS = (*planrecord.FIELDS, "plan.assignment", "plan.partitions", "plan.channels", "digest")


@FUZZ
@given(field=st.sampled_from(FIELDS), value=JSON, resign=st.booleans())
def test_plan_records_with_any_field_replaced(cache, loop, field, value, resign) -> None:
    """A good record with one field replaced by any JSON value, signed again with the key
    (as a buggy build would write it) or not: refused, or a plan that fits the loop."""
    graph, target, plan, reason, details = loop
    record = json.loads(planrecord.encode(plan, reason, details, graph, target, KEY))
    if "." in field:
        outer, inner = field.split(".")
        record[outer] = {**record[outer], inner: value}
    else:
        record[field] = value
    if resign and field != "digest":
        record["digest"] = plancache.sign({n: record[n] for n in planrecord.FIELDS})
    _decode_or_refuse(json.dumps(record), graph, target)


@FUZZ
@given(content=st.binary(max_size=300) | JSON.map(lambda v: json.dumps(v).encode()))
def test_plan_cache_files_of_any_content(cache, loop, content) -> None:
    graph, target = loop[:2]
    key = KEY
    (cache / f"{key}.json").write_bytes(content)
    plancache.clear_memory()
    text = plancache.get(key)
    assert isinstance(text, str)
    _decode_or_refuse(text, graph, target)


# -- the tune-cache loader ----------------------------------------------------------------------
NAMES = ["heuristic", "optimal", "none"]
GOOD_REPORT = {
    "kernel": "k",
    "key": ["n=4"],
    "winner": "heuristic",
    "device": "H200",
    "reference": "reference",
    "tuned": True,
    "cached": False,
    "note": "",
    "rounds": 3,
    "candidates": [
        {"name": "heuristic", "status": "timed", "ms": [1.0, 1.0, 1.0], "compile_s": 0.1},
        {"name": "optimal", "status": "discarded", "reason": "differs", "compile_s": 0.1},
        {"name": "none", "status": "timed", "ms": [2.0, 2.0, 2.0], "compile_s": 0.1},
    ],
    "compile_s": 0.3,
    "check_s": 0.1,
    "bench_s": 0.2,
    "total_s": 0.6,
}


def _check_or_refuse(data) -> None:
    try:
        report = tunecache.check(data, "k", ["n=4"], NAMES, "reference")
    except tunecache.BadChoice as e:
        assert str(e) and "\n" not in str(e)
        return
    assert report.kernel == "k" and report.key == ["n=4"] and report.tuned
    correct = [c.name for c in report.candidates if c.status in tunecache.CORRECT]
    assert report.winner in correct or (not correct and report.winner == "reference")


def test_the_good_tuning_report_is_accepted() -> None:
    assert tunecache.check(GOOD_REPORT, "k", ["n=4"], NAMES, "reference").winner == "heuristic"


@FUZZ
@given(field=st.sampled_from([*GOOD_REPORT, "extra"]), value=JSON, index=st.integers(0, 2))
def test_tuning_reports_with_any_field_replaced(field, value, index) -> None:
    data = json.loads(json.dumps(GOOD_REPORT))
    data[field] = value
    _check_or_refuse(data)
    data = json.loads(json.dumps(GOOD_REPORT))
    data["candidates"][index] = value if not isinstance(value, dict) else {"name": "x", **value}
    _check_or_refuse(data)


@FUZZ
@given(content=st.binary(max_size=300) | JSON.map(lambda v: json.dumps(v).encode()))
def test_tune_cache_files_of_any_content(tmp_path, monkeypatch, content) -> None:
    monkeypatch.setenv(plancache.ENV_DIR, str(tmp_path))
    key = "e" * 64
    tunecache.cache_dir().mkdir(parents=True, exist_ok=True)
    (tunecache.cache_dir() / f"{key}.json").write_bytes(content)
    try:
        data = tunecache.load(key)
    except tunecache.BadChoice:
        return
    assert isinstance(data, dict)
    _check_or_refuse(data)

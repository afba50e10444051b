"""Plan-cache records are checked against the loop they are for: a record that is valid JSON
but a wrong plan (ids out of range, a rotated assignment, another loop's plan, an edited
objective) is a miss, is solved again and rewritten, and the report says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.model.check import check_plan
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.target import target_for
from ws_solver.pipeline import plancache, planrecord
from ws_solver.pipeline.partition import SolveOptions, plan_loop

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"  # specialized, solved fast
# Planned for the Triton of the corpus dump (on 3.9 the 8-warp GEMM stays unspecialized).
GEMM_36 = ("--triton-version", "3.6.0")
OTHER = CORPUS / "attention_fwd.d64_m128n64_w4_s3.sm90.ttgir"
OPTIONS = SolveOptions(time_limit=2.0)


def graph_of(path: Path, loop: int = 0):
    module = ir.parse(path.read_text())
    return build_graph(module, ws_loops(module)[loop])


@pytest.fixture(scope="module")
def gemm():
    return graph_of(GEMM), target_for("sm_90")


def stored(cache: Path) -> tuple[Path, dict]:
    [path] = cache.glob("*.json")
    return path, json.loads(path.read_text())


def rewrite(path: Path, record: dict, *, keep_digest: bool = False) -> None:
    """Store an edited record; by default with a matching checksum, as a buggy writer (or
    one who knows the format and the cache's key) would leave it."""
    body = {name: record[name] for name in planrecord.FIELDS}
    if not keep_digest:
        record = {**record, "digest": plancache.sign(body)}
    path.write_text(json.dumps(record))
    plancache.clear_memory()


def rotated(assignment: list) -> list:
    return assignment[1:] + assignment[:1]


def out_of_range(assignment: list) -> list:
    return [[9] if parts == [1] else parts for parts in assignment]


EDITS = {
    "partition ids out of range": (
        lambda r: {**r, "plan": {**r["plan"], "assignment": out_of_range(r["plan"]["assignment"])}},
        "partitions [9]",
    ),
    "rotated assignment": (
        lambda r: {**r, "plan": {**r["plan"], "assignment": rotated(r["plan"]["assignment"])}},
        "",
    ),
    "edited objective": (lambda r: {**r, "objective": r["objective"] - 1}, "objective is"),
    "no partitions": (
        lambda r: {**r, "plan": {**r["plan"], "partitions": []}},
        "partition ids are []",
    ),
    "not a plan": (lambda r: {**r, "plan": {"loop": r["plan"]["loop"]}}, "does not read back"),
    "another loop": (lambda r: {**r, "loop": "other#loop0"}, "it is for other#loop0"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_bad_record_is_a_miss_and_is_rewritten(cache, gemm, edit: str) -> None:
    graph, target = gemm
    plan, reason, details = plan_loop(graph, target, "optimal", OPTIONS)
    assert "plan_cache" not in details and plan.specialized
    path, record = stored(cache)
    change, says = EDITS[edit]
    rewrite(path, change(record))
    again, _, details = plan_loop(graph, target, "optimal", OPTIONS)
    assert details["plan_cache"] == "replaced", details
    assert says in details["plan_cache_problem"], details["plan_cache_problem"]
    assert again == plan and not check_plan(again, graph, target)
    rewritten = stored(cache)[1]  # the good record again (wall times aside)
    assert rewritten["plan"] == record["plan"] and rewritten["objective"] == record["objective"]
    plancache.clear_memory()
    assert plan_loop(graph, target, "optimal", OPTIONS)[2]["plan_cache"] == "hit"


def test_edited_record_with_its_old_checksum_is_a_miss(cache, gemm) -> None:
    graph, target = gemm
    plan_loop(graph, target, "heuristic", OPTIONS)
    path, record = stored(cache)
    record["reason"] = "made up"
    rewrite(path, record, keep_digest=True)
    _, reason, details = plan_loop(graph, target, "heuristic", OPTIONS)
    assert details["plan_cache_problem"] == "its checksum does not match its content"
    assert reason != "made up"


def test_record_of_another_loop_is_refused(cache, gemm) -> None:
    graph, target = gemm
    other = graph_of(OTHER)
    plan, reason, details = plan_loop(other, target, "heuristic", OPTIONS)
    text = planrecord.encode(plan, reason, details, other, target, "k")
    with pytest.raises(planrecord.BadRecord, match="it is for"):
        planrecord.decode(text, graph, target, "k")
    with pytest.raises(planrecord.BadRecord, match="not JSON"):
        planrecord.decode("{torn", graph, target, "k")
    with pytest.raises(planrecord.BadRecord, match="no key, plan"):
        planrecord.decode("{}", graph, target, "k")


def test_record_round_trips(gemm) -> None:
    graph, target = gemm
    plan, reason, details = plan_loop(graph, target, "heuristic", SolveOptions(cache=False))
    text = planrecord.encode(plan, reason, details, graph, target, "k")
    assert planrecord.decode(text, graph, target, "k") == (plan, reason, details)


# -- through the command line -----------------------------------------------------------------
def ws_solver(*args, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env[plancache.ENV_DIR] = str(cache)
    env.pop("WS_SOLVER_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ws_solver", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("edit", ["partition ids out of range", "rotated assignment"])
def test_partition_recovers_from_a_bad_record(tmp_path: Path, edit: str, monkeypatch) -> None:
    cache, out = tmp_path / "plans", tmp_path / "out.ttgir"
    monkeypatch.setenv(plancache.ENV_DIR, str(cache))  # `rewrite` signs with its key
    first = ws_solver("partition", GEMM, *GEMM_36, "-o", out, cache=cache)
    assert first.returncode == 0, first.stderr
    good = out.read_text()
    path, record = stored(cache)
    rewrite(path, EDITS[edit][0](record))
    report = tmp_path / "report.json"
    second = ws_solver("partition", GEMM, *GEMM_36, "-o", out, "--json", report, cache=cache)
    assert second.returncode == 0, second.stderr
    assert "solved again: bad plan-cache record" in second.stderr
    assert out.read_text() == good
    [loop] = json.loads(report.read_text())["loops"]
    assert loop["plan_cache"] == "replaced" and loop["plan_cache_problem"]
    third = ws_solver("partition", GEMM, *GEMM_36, "-o", out, cache=cache)
    assert third.returncode == 0 and "from the plan cache" in third.stderr

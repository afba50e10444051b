"""Plan enumeration (`encode.alternatives`), `explore:K`, `ws-solver explore` and the
departure rule of `optimal` (model/decision.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.cli.explore import plan_lines
from ws_solver.core.options import SolverBudget
from ws_solver.core.strategy import explore_rank, parse_strategy
from ws_solver.encode import encode, solve
from ws_solver.encode.alternatives import alternatives, signature
from ws_solver.heuristic import decide
from ws_solver.model.check import check_plan
from ws_solver.model.cost import evaluate
from ws_solver.model.decision import DEPARTURE_MARGIN, departure
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.pipeline.exploration import annotate_rank, explore_module
from ws_solver.pipeline.partition import SolveOptions, plan_loop, resolve_target

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "ttgir"
GEMM = CORPUS / "gemm_tma.t128x256x64_w8_s3.sm90.ttgir"
TWO_LOOPS = CORPUS / "attention_fwd.causal_d64_m128n64_w4_s3.sm90.ttgir"
ROW_REDUCE = CORPUS / "row_reduce.r4_n1024_w4_s3.sm90.ttgir"
OPTIONS = SolveOptions(time_limit=2.0, workers=1, seed=0, cache=False)


def first_loop(path: Path):
    module = ir.parse(path.read_text())
    target = resolve_target(module, None)
    return build_graph(module, ws_loops(module)[0]), target


@pytest.fixture(scope="module")
def gemm_alternatives():
    graph, target = first_loop(GEMM)
    heuristic, _ = decide(graph, target)
    return (
        graph,
        target,
        alternatives(
            graph, target, 5, hint=heuristic, budget=SolverBudget(2.0, workers=OPTIONS.workers)
        ),
    )


def test_rank_zero_is_the_optimum(gemm_alternatives) -> None:
    graph, target, alts = gemm_alternatives
    heuristic, _ = decide(graph, target)
    best = solve(graph, target, hint=heuristic, budget=SolverBudget(2.0, workers=1))
    assert alts[0].objective == best.objective
    assert alts[0].plan.assignment == best.plan.assignment


def test_alternatives_are_valid_distinct_and_best_first(gemm_alternatives) -> None:
    graph, target, alts = gemm_alternatives
    assert len(alts) == 5
    assert [a.rank for a in alts] == list(range(5))
    enc = encode(graph, target)
    signatures = {signature(enc, a.plan) for a in alts}
    assert len(signatures) == 5  # distinct in where the non-duplicable ops run
    objectives = [a.objective for a in alts]
    assert objectives == sorted(objectives)  # each round: the best plan not cut yet
    for a in alts:
        assert check_plan(a.plan, graph, target) == []
        assert evaluate(a.plan, graph, target).objective == a.objective
        assert a.plan.strategy == f"explore:{a.rank}"
        assert a.status == "OPTIMAL"


def test_alternatives_are_deterministic(gemm_alternatives) -> None:
    graph, target, alts = gemm_alternatives
    heuristic, _ = decide(graph, target)
    again = alternatives(
        graph, target, 5, hint=heuristic, budget=SolverBudget(2.0, workers=OPTIONS.workers)
    )
    assert [a.plan.to_json() for a in again] == [a.plan.to_json() for a in alts]


def test_a_loop_with_few_plans_ends_early() -> None:
    graph, target = first_loop(GEMM)
    alts = alternatives(graph, target, 500, budget=SolverBudget(2.0))
    assert 5 < len(alts) < 500  # the model has finitely many distinct placements
    assert len({a.signature for a in alts}) == len(alts)


def test_k_must_be_positive() -> None:
    graph, target = first_loop(GEMM)
    with pytest.raises(ValueError, match="at least 1"):
        alternatives(graph, target, 0)


def test_strategy_names() -> None:
    assert explore_rank("explore:3") == 3 and explore_rank("optimal") is None
    parse_strategy("explore:0")
    for bad in ("explore:", "explore:x", "explore:-1", "best"):
        with pytest.raises(ValueError):
            parse_strategy(bad)


def test_explore_strategy_takes_the_ranked_plan(gemm_alternatives) -> None:
    graph, target, alts = gemm_alternatives
    for rank in (0, 2):
        plan, reason, details = plan_loop(graph, target, f"explore:{rank}", OPTIONS)
        assert plan.assignment == alts[rank].plan.assignment
        assert details["rank"] == rank and f"explore rank {rank}" in reason


def test_explore_strategy_past_the_last_plan_keeps_rank_zero() -> None:
    graph, target = first_loop(ROW_REDUCE)  # nothing to overlap: one plan
    plan, reason, details = plan_loop(graph, target, "explore:3", OPTIONS)
    assert not plan.specialized and details["rank"] == 0 and "only 1 plan" in reason


def test_annotate_rank_writes_each_loop() -> None:
    module = ir.parse(TWO_LOOPS.read_text())
    loops = explore_module(module, 3, options=OPTIONS)
    assert [len(loop.plans) for loop in loops] == [3, 3]
    assert all(loop.heuristic_rank() == 0 for loop in loops)  # both keep one partition
    fresh = ir.parse(TWO_LOOPS.read_text())
    annotate_rank(fresh, loops, 1)
    text = fresh.print()
    assert text.count("ttg.partition.stages") == 2  # rank 1 specializes both loops
    plain = ir.parse(TWO_LOOPS.read_text())
    annotate_rank(plain, loops, 0)
    assert "ttg.partition.stages" not in plain.print()
    assert "tt.warp_specialize" not in plain.print()  # rank 0: not specialized, tag removed


def test_departure_rule() -> None:
    assert departure(None, 100).depart  # no valid heuristic plan: take the optimum
    kept = departure(1000, 960)
    assert not kept.depart and kept.decision == "heuristic kept"
    assert abs(kept.modeled_gain - 0.04) < 1e-9 and kept.margin == DEPARTURE_MARGIN
    assert departure(1000, 900).depart and "10.0% > margin" in departure(1000, 900).reason()
    assert not departure(1000, 950).depart
    assert not departure(1000, 1000, margin=0.0).depart  # a tie is no gain
    assert departure(1000, 999, margin=0.0).depart


@pytest.mark.parametrize(
    "name, decision",
    [
        # modeled gain 2.0% (3.6): not more than the model's measured error, so the heuristic's
        # plan (since the sm_100 TMA rate and tcgen05 stall of issue 39)
        ("attention_bwd.d64_n128m64_w4_s2.sm100.ttgir", "heuristic kept"),
        # modeled gains 19.6% and 12.1% (3.6): beyond it, so the optimum
        ("attention_fwd.d128_m128n128_w8_s2.sm100.ttgir", "optimum"),
        ("gemm_persistent.t128x128x64_gelu_w4_s3.sm100.ttgir", "optimum"),
    ],
)
@pytest.mark.slow
def test_optimal_departs_only_beyond_the_margin(name: str, decision: str) -> None:
    graph, target = first_loop(CORPUS / name)
    heuristic, _ = decide(graph, target)
    modeled, _, _ = plan_loop(graph, target, "optimal", SolveOptions(cache=False, margin=None))
    chosen, reason, details = plan_loop(graph, target, "optimal", SolveOptions(cache=False))
    h_ii = evaluate(heuristic, graph, target).ii
    o_ii = evaluate(modeled, graph, target).ii
    assert details["decision"] == decision and details["optimum_ii"] == o_ii
    assert abs(details["modeled_gain"] - (h_ii - o_ii) / h_ii) < 1e-6
    expected = heuristic if decision == "heuristic kept" else modeled
    assert chosen.assignment == expected.assignment
    assert ("heuristic's plan kept" in reason) == (decision == "heuristic kept")


def test_cli_explore_json_and_out_dir(ws_solver, tmp_path: Path) -> None:
    out = tmp_path / "plans.json"
    result = ws_solver("explore", TWO_LOOPS, "--k", "3", "--json", out, "--out-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "ws-solver.explore" and doc["version"] == 1 and doc["k"] == 3
    assert {k["name"] for k in doc["knobs"]} == {
        "num_stages",
        "overlap_wgmma",
        "release_per_warp_group",
        "take_turns",
    }
    assert [len(loop["plans"]) for loop in doc["loops"]] == [3, 3]
    plan = doc["loops"][0]["plans"][1]
    assert plan["strategy"] == "explore:1" and plan["status"] == "OPTIMAL"
    names = sorted(p.name for p in tmp_path.glob("*.ttgir"))
    assert names == [f"{TWO_LOOPS.stem}.explore-{k}.ttgir" for k in range(3)]
    for name in names:  # every annotated file is TTGIR ws_solver reads back
        ir.parse((tmp_path / name).read_text())
    assert "explore:2" in result.stdout and "rank 0" in result.stdout


def test_cli_explore_bad_input(ws_solver, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttgir"
    bad.write_text("module {\n  tt.func @f() {\n    %0 = arith.addi %x, : i32\n  }\n}\n")
    out = tmp_path / "r.json"
    result = ws_solver("explore", bad, "--json", out)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and str(bad) in result.stderr
    assert not out.exists()
    result = ws_solver("explore", GEMM, "--k", "0")
    assert result.returncode == 2
    result = ws_solver("explore", GEMM, "--out-dir", tmp_path / "missing")
    assert result.returncode == 2 and "no such directory" in result.stderr


def test_explore_api_takes_a_path_or_text(tmp_path: Path) -> None:
    import ws_solver

    from_path = ws_solver.explore(GEMM, k=2)
    from_text = ws_solver.explore(GEMM.read_text(), k=2)
    assert from_path["file"] == str(GEMM) and from_text["file"] == "<text>"
    assert from_path["loops"] == from_text["loops"]
    with pytest.raises(FileNotFoundError):
        ws_solver.explore(tmp_path / "missing.ttgir")


@pytest.mark.parametrize(
    ("name", "plan", "tied_with"),
    [
        # The heuristic's plan is not listed but has rank 0's II: `optimal` keeps it.
        ("gemm_tma.t128x256x64_w8_s3.sm90.ttgir", "heuristic", 0),
        # Modeled 19.6% better than the heuristic's plan: `optimal` builds rank 0.
        ("attention_fwd.d128_m128n128_w8_s2.sm100.ttgir", "optimum", 0),
    ],
)
def test_explore_names_the_plan_optimal_builds(name: str, plan: str, tied_with: int) -> None:
    graph, target = first_loop(CORPUS / name)
    module = ir.parse((CORPUS / name).read_text())
    (loop,) = explore_module(module, 3, options=OPTIONS)
    record = loop.to_dict()
    chosen = record["optimal"]
    assert chosen["plan"] == plan and chosen["tied_with"] == tied_with
    built, _, _ = plan_loop(graph, target, "optimal", SolveOptions(time_limit=5.0, cache=False))
    built_ii = evaluate(built, graph, target).ii
    if plan == "heuristic":
        assert record["heuristic"]["rank"] is None and record["heuristic"]["tied_with"] == 0
        assert built.assignment == loop.heuristic.assignment
        assert built_ii == record["plans"][0]["ii"]
    else:
        assert chosen["rank"] == 0 and built_ii == record["plans"][0]["ii"]
        assert built_ii < record["heuristic"]["ii"]
    lines = plan_lines(name, record).splitlines()
    assert lines[-1].startswith("  strategy optimal builds ")
    assert f"tied with rank {tied_with}" in lines[0] or plan == "optimum"

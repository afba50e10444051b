"""The published sm_100 pairs (docs/blackwell-evidence.json): the model orders each runnable
pair as the JSON says it does (`model.agrees`), so the agreement can neither regress nor
improve without the page being updated; and the sm_100 tcgen05 serial stall (CostParams) is
what specialization removes, with `evaluate` and the CP-SAT objective equal on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.encode import encode, solve
from ws_solver.encode.decode import fit
from ws_solver.encode.solve import fixed_plan_objective
from ws_solver.model.cost import evaluate, stalls
from ws_solver.model.cost_table import cost_table
from ws_solver.model.dfg import build_graphs
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan
from ws_solver.pipeline import SolveOptions, partition_module

REPO = Path(__file__).resolve().parent.parent
EVIDENCE = json.loads((REPO / "docs" / "blackwell-evidence.json").read_text(encoding="utf-8"))
RUNNABLE = [r for r in EVIDENCE if r.get("model")]
VERSIONS = ("3.6.0", "3.9.0")
OPTIONS = SolveOptions(time_limit=2, cache=False, margin=None, wall_clock=False)


def _dumps(record: dict, version: str) -> list[Path]:
    """The evidence TTGIR a record's pair maps to, under Triton `version`."""
    model = record["model"]
    if "dumps" in model:
        names = [Path(d).name for d in model["dumps"]]
    else:
        names = [f"{c}.ttgir" for c in model["matching_configs"]]
    found = sorted({REPO / "corpus" / "evidence" / f"triton-{version}" / n for n in names})
    assert found and all(p.exists() for p in found), found
    return found


def _modeled_faster(path: Path, version: str) -> str:
    """ "ws", "non_ws" or "tie": the optimum against the one-partition plan."""
    text = path.read_text(encoding="utf-8")
    iis = {}
    for strategy in ("none", "optimal"):
        report = partition_module(
            ir.parse(text), strategy, target="sm_100", options=OPTIONS, triton=version
        )[0]
        iis[strategy] = (report.ii, report.specialized)
    (none, _), (best, specialized) = iis["none"], iis["optimal"]
    if specialized and best < none:
        return "ws"
    return "tie" if best == none else "non_ws"


def test_runnable_pairs_are_documented():
    assert len(RUNNABLE) == 7
    assert all(r["clean"] and r["measured_faster"] == "ws" for r in RUNNABLE)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("record", RUNNABLE, ids=[r["id"] for r in RUNNABLE])
def test_model_direction_matches_the_page(record, version):
    directions = {_modeled_faster(p, version) for p in _dumps(record, version)}
    agrees = directions == {record["measured_faster"]}
    assert agrees == record["model"]["agrees"], (record["id"], directions)


def test_agreement_count():
    # docs/blackwell-evidence.md: 1 of 7 (the JAX pair); the six Gluon pairs tie because no
    # split of the persistent 4-warp 128x256 loop fits the modeled register file.
    assert sum(r["model"]["agrees"] for r in RUNNABLE) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_tcgen05_serial_stall_is_what_specializing_removes(version):
    path = REPO / "corpus/evidence" / f"triton-{version}" / "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
    graph = build_graphs(ir.parse(path.read_text(encoding="utf-8")))[0]
    target = target_for("sm_100", version)
    table = cost_table(graph, target)
    assert table.tcgen05s and table.tcgen05_loads and not table.wgmmas
    single = single_partition_plan(graph, target)
    assert stalls(single, table)["tcgen05_serial_stall_cycles"]
    result = solve(graph, target, time_limit=2, workers=1, seed=0)
    assert result.plan.specialized
    assert not stalls(result.plan, table)["tcgen05_serial_stall_cycles"]
    cost, unspecialized = evaluate(result.plan, graph, target), evaluate(single, graph, target)
    assert result.objective == cost.objective
    assert unspecialized.ii == cost.ii + table.params.tcgen05_serial_stall_cycles
    enc = encode(graph, target)  # the encoder's stall term is `stalls`'s, on both plans
    for plan in (single, result.plan):
        fitted = fit(enc, plan)
        assert fixed_plan_objective(enc, fitted) == evaluate(fitted, graph, target).objective


def test_sm90_tables_have_no_tcgen05():
    path = next((REPO / "corpus" / "ttgir").glob("gemm_tma*.sm90.ttgir"))
    graph = build_graphs(ir.parse(path.read_text(encoding="utf-8")))[0]
    table = cost_table(graph, target_for("sm_90"))
    assert not table.tcgen05s and not table.tcgen05_loads
    assert "tcgen05_serial_stall_cycles" not in stalls(
        single_partition_plan(graph, target_for("sm_90")), table
    )

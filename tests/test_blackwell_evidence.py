"""The published sm_100 pairs (docs/blackwell-evidence.json): the model orders each runnable
pair as the JSON says it does (`model.agrees`), so the agreement can neither regress nor
improve without the page being updated; and the sm_100 tcgen05 serial stall (CostParams) is
what specialization removes, with `evaluate` and the CP-SAT objective equal on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ws_solver import ir
from ws_solver.core.options import SolverBudget
from ws_solver.encode import encode, solve
from ws_solver.encode.decode import fit
from ws_solver.encode.solve import fixed_plan_objective
from ws_solver.model.cost import evaluate, stalls
from ws_solver.model.cost_table import cost_table, tmem_load_held_bytes
from ws_solver.model.dfg import build_graphs
from ws_solver.model.resources import unspecialized_registers
from ws_solver.model.target import target_for
from ws_solver.model.unspecialized import single_partition_plan
from ws_solver.pipeline.partition import SolveOptions, partition_module

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
    # docs/blackwell-evidence.md: 7 of 7 since the TMEM message change (1 of 7 before it: the
    # six Gluon pairs tied, no split of the persistent 4-warp 128x256 loop fitting the
    # modeled register file).
    assert sum(r["model"]["agrees"] for r in RUNNABLE) == 7


CHECKS = [
    (r["id"], name, check)
    for r in RUNNABLE[:1]  # the six Gluon records share their checks
    for name, check in r["model"].get("checks", {}).items()
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("record_id", "name", "check"), CHECKS, ids=[c[1] for c in CHECKS])
def test_checks_match_the_page(record_id, name, check, version):
    # The dumps run beside a pair (not counted): the bias kernel still ties (its f32 addf holds
    # the whole tile and a 256-column bias row a thread; ptxas spills it either way).
    path = _dumps({"model": {"dumps": [f"{name}.ttgir"]}}, version)[0]
    assert _modeled_faster(path, version) == check["modeled_faster"][f"triton-{version}"]


@pytest.mark.parametrize("version", VERSIONS)
def test_tmem_load_holds_one_message_of_a_wide_tile(version):
    # A 4-warp 128x256 fp32 tile (256 registers a thread) counts one 64-register message, as do
    # its register views; the truncated f16 tile is then the widest transient: 208 registers.
    # The same loop with a bias row keeps the f32 addf of the whole tile: 384, over the cap.
    evidence = REPO / "corpus/evidence" / f"triton-{version}"
    target = target_for("sm_100", version)
    for name, need in (
        ("gemm_persistent_sliced.t128x256x64_x4_w4_s4", 208),
        ("gemm_persistent_sliced.t128x256x64_x1_w4_s4", 208),
        ("gemm_persistent.t128x256x64_none_w4_s4", 384),
    ):
        text = (evidence / f"{name}.sm100.ttgir").read_text(encoding="utf-8")
        table = cost_table(build_graphs(ir.parse(text))[0], target)
        pairs = zip(table.graph.nodes, table.nodes, strict=True)
        tile = [c for n, c in pairs if n.op_name == "ttng.tmem_load"]
        assert [c.transient_bytes for c in tile] == [4 * 128 * 64]
        assert unspecialized_registers(table) == need, name
    assert tmem_load_held_bytes(target, 4, 4 * 128 * 128) == 4 * 128 * 128  # one message
    assert tmem_load_held_bytes(target, 8, 4 * 128 * 256) == 4 * 256 * 128


@pytest.mark.parametrize("version", VERSIONS)
def test_tcgen05_serial_stall_is_what_specializing_removes(version):
    path = REPO / "corpus/evidence" / f"triton-{version}" / "gemm_tma.t128x128x64_w4_s4.sm100.ttgir"
    graph = build_graphs(ir.parse(path.read_text(encoding="utf-8")))[0]
    target = target_for("sm_100", version)
    table = cost_table(graph, target)
    assert table.tcgen05s and table.tcgen05_loads and not table.wgmmas
    single = single_partition_plan(graph, target)
    assert stalls(single, table)["tcgen05_serial_stall_cycles"]
    result = solve(graph, target, budget=SolverBudget(2, workers=1, seed=0))
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

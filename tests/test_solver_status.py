"""`records.check_solver_status`: a loop the solver left without a plan is a failed attempt,
and the fallback warning says why where the model knows (a memory floor no plan fits)."""

from types import SimpleNamespace

import pytest

from ws_solver.pipeline.partition import LoopError
from ws_solver.triton.dropin.records import SolverGaveNoPlan, check_solver_status

FLOOR = "the loop's buffers alone need 294912 B of shared memory, more than the 232448"


def report(status: str, reason: str = "") -> SimpleNamespace:
    return SimpleNamespace(solver={"status": status}, loop=0, kernel="k", line=46, reason=reason)


def test_a_plan_passes() -> None:
    check_solver_status([report("OPTIMAL"), report("FEASIBLE")])


def test_an_infeasible_loop_names_the_floor_it_breaks() -> None:
    with pytest.raises(LoopError) as e:
        check_solver_status([report("INFEASIBLE", f"infeasible: {FLOOR}")])
    assert isinstance(e.value.error, SolverGaveNoPlan)
    assert f"solver status INFEASIBLE on loop 0 ({FLOOR})" in str(e.value)


def test_out_of_time_says_only_the_status() -> None:
    with pytest.raises(LoopError) as e:
        check_solver_status([report("UNKNOWN", "not specialized: no better than one partition")])
    assert str(e.value).endswith("solver status UNKNOWN on loop 0")

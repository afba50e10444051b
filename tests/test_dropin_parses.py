"""What a drop-in compile parses with ws_solver's reader: the planner's input once, whatever the
decision check and the fallbacks plan on it, and the plan's module goes to the guard's child
known to be located (the child does not parse it for that). CPU only."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("triton")

from test_dropin import _compile, _stub_solver, isolated  # noqa: E402, F401

import ws_solver.triton as wst  # noqa: E402
from ws_solver import ir  # noqa: E402
from ws_solver.triton.dropin import kernel_compile  # noqa: E402
from ws_solver.triton.dropin.planner_input import PlannerInput  # noqa: E402
from ws_solver.triton.guard import client as lguard  # noqa: E402
from ws_solver.triton.guard import server  # noqa: E402

pytestmark = pytest.mark.triton


def test_a_compile_parses_the_planner_s_input_once(isolated, monkeypatch) -> None:  # noqa: F811
    """An sm_90 GEMM through `optimal`, whose stub solver gives no plan (the heuristic's
    plan is then planned on the same parse) and whose decision check builds the other
    decision (planned on it too)."""
    parses: Counter = Counter()
    real_parse = ir.parse
    monkeypatch.setattr(ir, "parse", lambda text: parses.update([text]) or real_parse(text))
    inputs: list[PlannerInput] = []

    class Recorded(PlannerInput):
        def __init__(self, text):
            super().__init__(text)
            inputs.append(self)

    jobs: list = []
    probe = lguard.LoweringGuard.probe

    def spy(self, job, *args, **kwargs):
        jobs.append(job)
        return probe(self, job, *args, **kwargs)

    monkeypatch.setattr(kernel_compile, "PlannerInput", Recorded)
    monkeypatch.setattr(lguard.LoweringGuard, "probe", spy)
    planned: list = []
    _stub_solver(monkeypatch, counter=planned)
    # One build after another: the heuristic's plan built beside the solve (a guess, not
    # checked, so not known to be located) would be among the jobs.
    wst.enable("optimal", parallel_builds=False)
    with pytest.warns(wst.WSFallbackWarning, match="compiled with heuristic"):
        _compile("gemm_tma", 90, "t128x256x64_w8_s3")
    report = wst.last_compile_report()
    assert report.strategy_used == "heuristic" and report.decision, report.to_dict()
    (given,) = [i for i in inputs if i.text]  # (KernelCompile starts with PlannerInput(None))
    assert len(planned) == 2 and parses[given.text] == 1
    # Where the seconds went (WS_SOLVER_LOG's line): each phase once, within the compile's.
    seconds = report.seconds
    assert {"partition point", "planning", "decision check"} <= set(seconds), seconds
    assert all(s >= 0 for s in seconds.values()) and sum(seconds.values()) <= report.wall_s
    ours = [job for job in jobs if "ttg.partition.stages" in job.text]
    assert ours and all(job.located for job in ours)
    # The child's lowering of it: no parse of the job's text, and the rewrite chain's parse
    # (again after the Hopper fix moved ops) gives the located text Triton then parses.
    parses.clear()
    server.probe_binary(ours[0], lambda stage: None)
    assert parses[ours[0].text] == 0 and sum(parses.values()) == 2, list(parses.values())

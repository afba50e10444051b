"""A compile report as a person reads it (``CompileReport.summary()``, ``str()``) and the one
line ``WS_SOLVER_LOG=1`` prints per compile."""

from __future__ import annotations

import threading
import time

from ws_solver.core import envvars
from ws_solver.triton.dropin.session import CompileReport, lock, timed

LOOP = {
    "loop": 0,
    "line": 44,
    "source": "gemm.py:37:46",
    "strategy": "optimal",
    "specialized": True,
    "reason": "specialized: 2 partitions",
    "ii": 1536,
    "partitions": [
        {"id": 0, "role": "compute+wgmma", "warps": 8, "registers": 240},
        {"id": 1, "role": "load", "warps": 4, "registers": 24},
    ],
}


def report(**fields) -> CompileReport:
    r = CompileReport("gemm_kernel", 90, "optimal", "optimal", wall_s=2.06)
    for k, v in fields.items():
        setattr(r, k, v)
    return r


def test_a_specialized_compile_reads_as_its_plan() -> None:
    r = report(loops=[LOOP], decision={"rule": "measured target", "evidence": "it stands"})
    text = str(r)
    assert text == r.summary()
    lines = text.splitlines()
    assert (
        lines[0] == "ws_solver: gemm_kernel (sm_90): asked optimal, built optimal's kernel in 2.1 s"
    )
    assert lines[1] == "  decided by measured target: it stands"
    assert lines[2].startswith("  loop 0 (gemm.py:37:46): 2 partitions: compute+wgmma 8 warps")
    assert "modeled II 1536 cycles" in lines[2]
    assert "CompileReport(" not in text


def test_stocks_kernel_kept_says_so_and_why() -> None:
    decision = {"rule": "spill check: stock", "evidence": "ptxas: optimal 1672 B spilled"}
    r = report(strategy_used="stock", decision=decision, loops=[{**LOOP, "strategy": "stock"}])
    lines = r.summary().splitlines()
    assert "built stock Triton's own kernel" in lines[0]
    assert lines[1] == "  decided by spill check: stock: ptxas: optimal 1672 B spilled"
    assert lines[2] == "  loop 0 (gemm.py:37:46): as stock Triton builds it"
    assert r.log_line() == (
        "ws_solver: gemm_kernel sm_90: optimal -> stock, spill check: stock; 2.06 s"
    )


def test_fallbacks_and_notes_are_listed() -> None:
    failed = {"strategy": "optimal", "loops": [{"loop": 0}], "reason": "ptxas: boom", "wall_s": 1}
    r = report(strategy_used="heuristic", fallbacks=[failed], notes=["a note"])
    lines = r.summary().splitlines()
    assert "  fell back: optimal failed on loop 0: ptxas: boom" in lines
    assert lines[-1] == "  note: a note"
    assert r.log_line().endswith("optimal -> heuristic, 1 fallback(s); 2.06 s")


def test_the_log_switch_reads_the_usual_spellings() -> None:
    for on in ("1", "true", "YES", " on "):
        assert envvars.logging({envvars.LOG: on})
    for off in ("", "0", "no", "off"):
        assert not envvars.logging({envvars.LOG: off})


def test_the_log_line_says_where_the_seconds_went() -> None:
    r = report(seconds={"partition point": 0.001, "planning": 0.12, "decision check": 1.5})
    assert r.log_line().endswith("; 2.06 s (planning 0.12, decision check 1.50)")


def test_a_phase_inside_another_is_counted_once() -> None:
    r = report()
    with timed(r, "decision check"):
        time.sleep(0.02)
        with timed(r, "planning"):
            time.sleep(0.03)
        with timed(r, "planning"):
            time.sleep(0.03)
    assert r.seconds["planning"] >= 0.06
    # The outer phase keeps only its own time: the 0.02 s, not the plannings' 0.06.
    assert 0.02 <= r.seconds["decision check"] < 0.05, r.seconds


def test_a_build_thread_times_its_planning_while_the_compile_holds_the_lock() -> None:
    """The compile holds the drop-in's lock (around its captured stderr) while a speculative
    build plans on another thread: timing that planning must not wait for the lock (it
    deadlocked the compile once)."""
    r = report()

    def plan() -> None:
        with timed(r, "planning"):
            pass

    with lock:
        worker = threading.Thread(target=plan, daemon=True)
        worker.start()
        worker.join(5)
        assert not worker.is_alive()
    assert "planning" in r.seconds

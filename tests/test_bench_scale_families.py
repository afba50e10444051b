"""bench_scale_families compare: several measurements side by side against the best known."""

from __future__ import annotations

from benchmarks.cpu.bench_scale_families import compare


def row(loop: str, ii: int, specialized: bool, status: str, **extra) -> dict:
    return {
        "loop": loop,
        "ops": 100,
        "run": "default",
        "ii": ii,
        "single_ii": 1000,
        "specialized": specialized,
        "status": status,
        "stopped_by": extra.get("stopped_by", "deterministic limit"),
        "first_solution_deterministic": 0.5,
    }


def test_compare_counts_each_label_against_the_best_of_all() -> None:
    before = [
        {"loop": "a", "ops": 100, "run": "heuristic", "ii": 900},
        row("a", 1000, False, "FEASIBLE"),  # unspecialized; a specialized 800 is known
        row("b", 500, True, "OPTIMAL", stopped_by=""),
    ]
    after = [
        row("a", 800, True, "FEASIBLE", stopped_by="wall clock"),
        row("b", 520, True, "FEASIBLE"),
    ]
    text = compare({"before": before, "after": after})
    assert "| a | 100 | 800 | 1000u (FEAS, 0.50) | 800 (FEAS*, 0.50) |" in text
    assert "| b | 100 | 500 | 500 (OPTI, 0.50) | 520 (FEAS, 0.50) |" in text
    assert "- before: within 5% of the best known 1/2 (50%), proven 1/2 (50%), " in text
    assert "- after: within 5% of the best known 2/2 (100%), proven 0/2 (0%), " in text
    before_line, after_line = text.splitlines()[-2:]
    assert before_line.endswith("better 1") and after_line.endswith("better 0")


def test_a_run_that_proved_its_ii_counts_as_proven_before_its_tie_break() -> None:
    rows = [row("a", 500, True, "FEASIBLE"), {**row("a", 500, True, "FEASIBLE"), "ii_proven": True}]
    assert "proven 1/2 (50%)" in compare({"x": rows})

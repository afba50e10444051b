"""The seed column of a comparison (`compare --triton-plan`): Triton's own partition
scheduler's plan of each loop beside the heuristic's, and whether they partition it alike."""

from __future__ import annotations

from collections.abc import Callable

from ..heuristic import decide
from ..model.target import target_for
from ..pipeline.agreement import seed_summary, side_by_side
from ..pipeline.inputs import read_input
from .seed_plan import seed_plans


def add_seed_column(document: dict, triton: str, say: Callable[[str], None]) -> None:
    """Put Triton's own plan beside the heuristic's in each loop record (`"seed"`), and its
    summary in the document; a file the scheduler fails on gets an error in its records,
    told to `say`, and the rest go on."""
    by_file: dict[str, list[dict]] = {}
    for r in document["loops"]:
        by_file.setdefault(r["file"], []).append(r)
    for file, records in by_file.items():
        target = target_for(records[0]["target"], document["settings"]["triton"])
        try:
            found = seed_plans(read_input(file), target)
        except Exception as e:  # the seed column never fails the comparison
            message = f"{file}: Triton's scheduler: {type(e).__name__}: {e}"
            say(message)
            for r in records:
                r["seed"] = {"error": message}
            continue
        loops = {graph.loop_index: (graph, seed, loop) for graph, seed, loop in found}
        for r in records:
            graph, seed, loop = loops[r["loop"]]
            built, _ = decide(graph, target, force=True)
            r["seed"] = {**side_by_side(graph, target, built, seed), "rules": list(loop.rules)}
    document["seed"] = seed_summary(document["loops"], triton)

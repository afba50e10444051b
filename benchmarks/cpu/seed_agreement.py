"""The heuristic beside its seed: Triton's own partition scheduler (PR #7312, Triton 3.7+)
on every loop of the Triton 3.9 corpus (docs/seed-vs-heuristic.md).

For each loop, Triton's scheduler is run on the corpus file (the same input ws_solver
reads), its partition sets are read back onto ws_solver's graph of the loop, and the
partitioning is compared with the one ws_solver's heuristic builds for the same target
(`decide(force=True)`: the plan it builds, before it may decline to specialize), up to
the numbering of partitions. Both plans are priced by ws_solver's cost model (the seed's
with the heuristic's warps, registers and channel depths). Needs Triton 3.7+ installed.

    python -m benchmarks.cpu.seed_agreement [--corpus corpus/ttgir-3.9] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ws_solver.heuristic import decide
from ws_solver.model.target import target_for
from ws_solver.pipeline.agreement import plan_brief, side_by_side
from ws_solver.research.seed_plan import SeedUnavailable, installed_version, seed_plans

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus" / "ttgir-3.9"


def loop_records(corpus: Path) -> list[dict]:
    """One record per warp-specialized loop of the corpus index, in index order."""
    records = []
    for entry in json.loads((corpus / "index.json").read_text()):
        text = (corpus / entry["file"]).read_text()
        for graph, seed, loop in seed_plans(text, num_stages=entry["num_stages"]):
            target = target_for(graph.target)
            built, _ = decide(graph, target, force=True)
            final, reason = decide(graph, target)
            record = {
                "file": entry["file"],
                "kernel": graph.kernel,
                "loop": graph.loop_index,
                "target": target.name,
                "ops": sum(1 for _ in graph.ops()),
                "heuristic": {
                    **plan_brief(built, graph, target),
                    "final_specialized": final.specialized,
                    "reason": reason,
                },
                **side_by_side(graph, target, built, seed),
            }
            record["seed"].update(
                {
                    "ids": list(loop.annotation.loop_partitions),
                    "stages": list(loop.annotation.stages),
                    "clones": loop.clones,
                    "rules": list(loop.rules),
                }
            )
            records.append(record)
            print(
                f"{entry['file']} loop {graph.loop_index}: "
                f"{'agree' if record['agree'] else 'differ'}",
                file=sys.stderr,
            )
    return records


def summary(records: list[dict]) -> dict:
    by_target: dict[str, dict] = {}
    for target in sorted({r["target"] for r in records}):
        mine = [r for r in records if r["target"] == target]
        agree = sum(r["agree"] for r in mine)
        by_target[target] = {
            "loops": len(mine),
            "agree": agree,
            "rate": round(agree / len(mine), 4),
            "seed_specialized": sum(r["seed"]["specialized"] for r in mine),
            "heuristic_built_specialized": sum(r["heuristic"]["specialized"] for r in mine),
        }
    rules = Counter(rule for r in records for rule in r["seed"]["rules"])
    return {"targets": by_target, "seed_rules": dict(sorted(rules.items()))}


def render(document: dict) -> str:
    lines = [
        "# The heuristic beside Triton's own partition scheduler (the seed)",
        "",
        f"Triton {document['triton']}, corpus `{document['corpus']}`; explanations of every "
        "difference: docs/seed-vs-heuristic.md.",
        "",
        "| target | loops | agree | rate | seed specializes | heuristic builds a split |",
        "|---|---|---|---|---|---|",
    ]
    for target, s in document["summary"]["targets"].items():
        lines.append(
            f"| {target} | {s['loops']} | {s['agree']} | {100 * s['rate']:.0f}% | "
            f"{s['seed_specialized']} | {s['heuristic_built_specialized']} |"
        )
    lines += [
        "",
        "| file | loop | agree | partitions h / seed | II h / seed | heuristic says | "
        "differing decided nodes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in document["loops"]:
        decided = [d for d in r["differing"] if d["decided"]]
        names = ", ".join(f"`{d['label']}` ({d['op']})" for d in decided[:6])
        more = f" and {len(decided) - 6} more" if len(decided) > 6 else ""
        lines.append(
            f"| {r['file']} | {r['loop']} | {'yes' if r['agree'] else 'no'} | "
            f"{r['partitions']['heuristic']} / {r['partitions']['seed']} | "
            f"{r['heuristic']['ii']} / {r['seed']['ii']} | {r['heuristic']['reason']} | "
            f"{names}{more} |"
        )
    lines += ["", "Seed plans ws_solver's model finds problems with:", ""]
    for r in document["loops"]:
        if r["seed"]["violations"]:
            lines.append(f"- {r['file']} loop {r['loop']}: {r['seed']['violations'][0]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=None, help="write results.json/.md here")
    args = parser.parse_args(argv)
    try:
        version = installed_version()
    except SeedUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    records = loop_records(args.corpus)
    corpus = args.corpus.resolve()
    document = {
        "triton": version,
        "corpus": str(corpus.relative_to(ROOT)) if corpus.is_relative_to(ROOT) else str(corpus),
        "summary": summary(records),
        "loops": records,
    }
    if args.out is None:
        print(render(document))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    (args.out / "results.md").write_text(render(document))
    print(f"wrote {args.out}/results.json and results.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

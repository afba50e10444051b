"""Heuristic vs optimal, loop by loop: records, the summary, and the report as text, Markdown,
HTML and JSON.

A comparison document has a deterministic part (settings, per-loop records, failures,
summary: the same for the same inputs and settings, whatever the number of jobs or the
machine's speed) and a `timing` part (wall times, jobs, plan-cache hits). The JSON structure
is a stable interface, documented in the README ("`compare --json`"); bump `SCHEMA_VERSION`
when it changes incompatibly.
"""

from __future__ import annotations

import base64
import html
import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from time import perf_counter

from ..model.check import check_plan
from ..model.cost import evaluate, tiebreak
from ..model.cost_params import PARAMS
from ..model.decision import DEPARTURE_MARGIN, departure
from ..model.graph import LoopGraph
from ..model.plan import Plan, is_assignable
from ..model.target import Target

SCHEMA = "ws-solver.compare"
SCHEMA_VERSION = 1

# Buckets of the II-reduction histogram (fractions of the heuristic's II), upper bounds.
REDUCTION_BUCKETS = (0.05, 0.10, 0.25, 0.50, 1.0)


# -- one loop ---------------------------------------------------------------------------------


@dataclass
class LoopComparison:
    record: dict  # deterministic
    timing: dict
    optimal: Plan
    optimal_details: dict  # the pipeline's solver details (status, bound, ...)


def compare_loop(file: str, graph: LoopGraph, target: Target, options) -> LoopComparison:
    """Run both strategies on one loop (pipeline.plan_loop, as `partition` does).

    The optimal plan may be unusable (infeasible loop, time out without a plan): callers
    check it (`cli.common.plan_failure`) before using the record."""
    from ..pipeline import plan_loop

    start = perf_counter()
    h_plan, h_reason, h_details = plan_loop(graph, target, "heuristic", options)
    heuristic_wall = perf_counter() - start
    start = perf_counter()
    # The modeled optimum itself; `departure` says what `optimal` makes of it.
    modeled = replace(options, margin=None) if hasattr(options, "margin") else options
    o_plan, o_reason, o_details = plan_loop(graph, target, "optimal", modeled)
    optimal_wall = perf_counter() - start
    candidate = h_plan
    if not h_plan.specialized and o_plan.specialized:
        candidate = _declined_candidate(graph, target) or h_plan
    record = loop_record(
        file, graph, target, (h_plan, h_reason), (o_plan, o_reason, o_details), candidate
    )
    record["optimal"]["departure"] = departure_record(record)
    timing = {
        "file": file,
        "kernel": graph.kernel,
        "loop": graph.loop_index,
        "heuristic_wall_s": round(heuristic_wall, 4),
        "optimal_wall_s": round(optimal_wall, 4),
        "solver_wall_s": o_details.get("solver_wall_s"),
        "plan_cache": "hit" if o_details.get("plan_cache") == "hit" else "miss",
    }
    return LoopComparison(record, timing, o_plan, o_details)


def departure_record(record: dict) -> dict:
    """What the `optimal` strategy does with this optimum (model/decision.py): "same plan"
    when the optimum is no better than the heuristic's plan under the model."""
    if not record["objective_better"]:
        return {"decision": "same plan", "modeled_gain": 0.0, "margin": DEPARTURE_MARGIN}
    h_ii = None if record["heuristic"]["violations"] else record["heuristic"]["ii"]
    choice = departure(h_ii, record["optimal"]["ii"])
    return {
        "decision": choice.decision,
        "modeled_gain": round(choice.modeled_gain, 6),
        "margin": choice.margin,
    }


def _declined_candidate(graph: LoopGraph, target: Target) -> Plan | None:
    """The specialized plan the heuristic built and then declined (it did not pay)."""
    try:
        from ..heuristic_seed import decide

        plan, _ = decide(graph, target, force=True)
    except Exception:
        return None
    return plan if plan.specialized else None


def loop_record(file, graph, target, heuristic, optimal, candidate: Plan) -> dict:
    h_plan, h_reason = heuristic
    o_plan, o_reason, details = optimal
    h = plan_summary(h_plan, graph, target, h_reason)
    o = plan_summary(o_plan, graph, target, o_reason)
    status = details.get("status") or "SKIPPED"
    bound = details.get("bound")
    o.update(
        {
            "status": status,
            "bound": bound,
            "bound_ii": ii_lower_bound(bound, target, o["ii"] if status == "OPTIMAL" else None),
            "gap": details.get("gap"),
            "heuristic_objective": details.get("heuristic_objective"),
        }
    )
    if h["ii"] > o["ii"]:
        better = "optimal"
    elif h["ii"] < o["ii"]:
        better = "heuristic"
    else:
        better = "same"
    return {
        "file": file,
        "kernel": graph.kernel,
        "loop": graph.loop_index,
        "line": graph.line,
        "target": target.name,
        "ops": sum(1 for _ in graph.ops()),
        "heuristic": h,
        "optimal": o,
        "better": better,
        "objective_better": o["objective"] < h["objective"],
        "ii_reduction": round((h["ii"] - o["ii"]) / h["ii"], 4) if h["ii"] else 0.0,
        "overrides_against": "plan" if candidate is h_plan else "declined candidate",
        "overrides": overrides(graph, h_plan, o_plan, h_reason, o_reason, candidate),
    }


def ii_lower_bound(bound: int | None, target: Target, proven_ii: int | None) -> int | None:
    """The lower bound on II implied by the solver's bound on the objective
    (II * ii_weight + tie-break): exact when the optimum is proven, else it allows for the
    largest tie-break a plan within the target's limits can have."""
    if proven_ii is not None:
        return proven_ii
    if bound is None:
        return None
    weight = PARAMS.ii_weight
    parts = target.max_partitions
    channels = target.max_mbarriers // 2  # each channel stage takes two mbarriers
    largest = tiebreak(
        parts,
        target.max_warps_per_cta,
        parts * target.setmaxnreg_max // target.setmaxnreg_step,
        channels,
        channels,
    )
    if largest < weight:
        return max(0, bound // weight)
    return max(0, -(-(bound - largest) // weight))


def plan_summary(plan: Plan, graph: LoopGraph, target: Target, reason: str) -> dict:
    cost = evaluate(plan, graph, target)
    return {
        "specialized": plan.specialized,
        "reason": reason,
        "ii": cost.ii,
        "objective": cost.objective,
        "bound_by": cost.bound_by,
        "partitions": len(plan.partitions),
        "roles": [p.role for p in plan.partitions],
        "warps": [p.warps for p in plan.partitions],
        "registers": [p.registers for p in plan.partitions],
        "total_warps": cost.total_warps,
        "register_file": cost.register_file,
        "channels": cost.channels,
        "channel_bytes": cost.channel_bytes,
        "shared_memory": cost.shared_memory,
        "tensor_memory_columns": cost.tensor_memory_columns,
        "merges": len(plan.merges),
        "violations": check_plan(plan, graph, target),
    }


def overrides(
    graph: LoopGraph,
    heuristic: Plan,
    optimal: Plan,
    h_reason: str,
    o_reason: str,
    candidate: Plan,
) -> list[dict]:
    """The heuristic decisions the optimum does not share.

    - `specialize`: one of them specializes the loop, the other does not;
    - `split`: a merge of the heuristic's log (naming its rule) put two nodes together, and
      the optimum runs them in different partitions;
    - `joined`: a def→use edge the heuristic left crossing between partitions (no rule merged
      its ends) runs inside one partition in the optimum.
    When the heuristic declined to specialize and the optimum did, `split`/`joined` compare
    against the plan the heuristic built and declined (`candidate`). When the optimum does
    not specialize, the `specialize` entry says it all."""
    out: list[dict] = []
    if heuristic.specialized != optimal.specialized:
        out.append(
            {
                "change": "specialize",
                "heuristic": h_reason,
                "optimal": o_reason,
            }
        )
    if not optimal.specialized or not candidate.specialized:
        return out
    for m in candidate.merges:
        if _together(candidate, m.src, m.dst) and not _together(optimal, m.src, m.dst):
            out.append(
                {
                    "change": "split",
                    "rule": m.rule,
                    **_pair(graph, m.src, m.dst),
                    "heuristic_partitions": [
                        list(candidate.partitions_of(m.src)),
                        list(candidate.partitions_of(m.dst)),
                    ],
                    "optimal_partitions": [
                        list(optimal.partitions_of(m.src)),
                        list(optimal.partitions_of(m.dst)),
                    ],
                }
            )
    seen: set[tuple[int, int]] = set()
    for e in graph.edges:
        pair = (e.src, e.dst)
        if pair in seen or e.src == e.dst:
            continue
        if not (is_assignable(graph, e.src) and is_assignable(graph, e.dst)):
            continue
        if not _together(candidate, e.src, e.dst) and _together(optimal, e.src, e.dst):
            seen.add(pair)
            out.append(
                {
                    "change": "joined",
                    "rule": None,
                    **_pair(graph, e.src, e.dst),
                    "value": e.value,
                    "bytes": e.bytes,
                    "heuristic_partitions": [
                        list(candidate.partitions_of(e.src)),
                        list(candidate.partitions_of(e.dst)),
                    ],
                    "optimal_partitions": [
                        list(optimal.partitions_of(e.src)),
                        list(optimal.partitions_of(e.dst)),
                    ],
                }
            )
    return out


def _together(plan: Plan, a: int, b: int) -> bool:
    return bool(set(plan.partitions_of(a)) & set(plan.partitions_of(b)))


def _pair(graph: LoopGraph, a: int, b: int) -> dict:
    na, nb = graph.nodes[a], graph.nodes[b]
    return {
        "src": a,
        "dst": b,
        "src_label": na.label,
        "dst_label": nb.label,
        "src_op": na.op_name,
        "dst_op": nb.op_name,
    }


def failure_record(
    file: str, message: str, kind: str, code: int, kernel=None, loop=None, line=None
) -> dict:
    """A file or loop that could not be compared; `kind`: bad_input, infeasible, timeout,
    internal."""
    return {
        "file": file,
        "kernel": kernel,
        "loop": loop,
        "line": line,
        "kind": kind,
        "exit_status": code,
        "message": message,
    }


# -- the document -----------------------------------------------------------------------------


def compare_document(
    settings: dict,
    records: Sequence[dict],
    failures: Sequence[dict],
    timings: Sequence[dict],
    files: int,
    jobs: int,
    total_wall_s: float,
) -> dict:
    records = sorted(records, key=_loop_key)
    failures = sorted(failures, key=_loop_key)
    timings = sorted(timings, key=_loop_key)
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "settings": dict(settings),
        "files": files,
        "loops": list(records),
        "failures": list(failures),
        "summary": summarize(records, failures),
        "timing": {
            "jobs": jobs,
            "total_wall_s": round(total_wall_s, 3),
            "heuristic_wall_s": percentiles([t["heuristic_wall_s"] for t in timings]),
            "optimal_wall_s": percentiles([t["optimal_wall_s"] for t in timings]),
            "plan_cache_hits": sum(t["plan_cache"] == "hit" for t in timings),
            "loops": list(timings),
        },
    }


def deterministic_part(document: dict) -> dict:
    """The document without its `timing` section: equal for equal inputs and settings."""
    return {k: v for k, v in document.items() if k != "timing"}


def _loop_key(r: dict):
    return (r["file"], -1 if r.get("loop") is None else r["loop"])


def summarize(records: Sequence[dict], failures: Sequence[dict]) -> dict:
    n = len(records)
    better = [r for r in records if r["better"] == "optimal"]
    reductions = [r["ii_reduction"] for r in better]
    solved = [r for r in records if r["optimal"]["status"] != "SKIPPED"]
    proven = [r for r in solved if r["optimal"]["status"] == "OPTIMAL"]
    histogram = []
    low = 0.0
    for high in REDUCTION_BUCKETS:
        count = sum(1 for x in reductions if low < x <= high)
        histogram.append({"above": low, "up_to": high, "loops": count})
        low = high
    rules = Counter(o["rule"] for r in records for o in r["overrides"] if o["change"] == "split")
    return {
        "loops": n,
        "failed": len(failures),
        "optimal_better": {
            "loops": len(better),
            "share": _share(len(better), n),
            "ii_reduction": _stats(reductions),
            "histogram": histogram,
        },
        "same_ii": sum(r["better"] == "same" for r in records),
        "same_ii_better_objective": sum(
            r["better"] == "same" and r["objective_better"] for r in records
        ),
        "heuristic_better": sum(r["better"] == "heuristic" for r in records),
        "specialized": {
            "heuristic": sum(r["heuristic"]["specialized"] for r in records),
            "optimal": sum(r["optimal"]["specialized"] for r in records),
        },
        "status": dict(sorted(Counter(r["optimal"]["status"] for r in records).items())),
        "proven_optimal": {
            "loops": len(proven),
            "solved": len(solved),
            "share": _share(len(proven), len(solved)),
        },
        "loops_with_overrides": sum(bool(r["overrides"]) for r in records),
        "departure": dict(
            sorted(Counter(r["optimal"]["departure"]["decision"] for r in records).items())
        ),
        "split_rules": dict(sorted(rules.items())),
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _stats(values: Sequence[float]) -> dict:
    if not values:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "mean": round(statistics.fmean(values), 4),
        "max": round(max(values), 4),
    }


def percentiles(values: Sequence[float]) -> dict:
    """p50/p90/p99 (nearest rank), max and sum of wall times, in seconds."""
    if not values:
        return {"p50": None, "p90": None, "p99": None, "max": None, "sum": 0.0}
    ordered = sorted(values)

    def rank(q: float) -> float:
        index = max(0, min(len(ordered) - 1, -(-len(ordered) * q // 100) - 1))
        return round(ordered[int(index)], 4)

    return {
        "p50": rank(50),
        "p90": rank(90),
        "p99": rank(99),
        "max": round(ordered[-1], 4),
        "sum": round(sum(ordered), 4),
    }


def to_json(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# -- for people: one document model, rendered as text, Markdown or HTML ---------------------

TABLE_COLUMNS = (
    ("file", "l"),
    ("kernel", "l"),
    ("loop", "r"),
    ("ops", "r"),
    ("II heur", "r"),
    ("II opt", "r"),
    ("ΔII", "r"),
    ("bound", "r"),
    ("gap", "r"),
    ("status", "l"),
    ("time s", "r"),
    ("parts H/O", "l"),
    ("warps H/O", "l"),
    ("regs H/O", "l"),
    ("chan H/O", "l"),
    ("smem KiB H/O", "l"),
    ("overrides", "r"),
)


def loop_rows(document: dict) -> list[tuple[str, ...]]:
    timing = {(t["file"], t["loop"]): t for t in document["timing"]["loops"]}
    rows = []
    for r in document["loops"]:
        h, o = r["heuristic"], r["optimal"]
        t = timing.get((r["file"], r["loop"]), {})
        delta = f"-{r['ii_reduction']:.1%}" if r["better"] == "optimal" else "="
        if r["better"] == "heuristic":
            delta = f"+{-r['ii_reduction']:.1%}"
        rows.append(
            (
                _short_file(r["file"]),
                r["kernel"],
                str(r["loop"]),
                str(r["ops"]),
                str(h["ii"]),
                str(o["ii"]),
                delta,
                "-" if o["bound_ii"] is None else str(o["bound_ii"]),
                "-" if o["gap"] is None else f"{o['gap']:.1%}",
                o["status"],
                "-" if t.get("optimal_wall_s") is None else f"{t['optimal_wall_s']:.2f}",
                f"{h['partitions']}/{o['partitions']}",
                f"{_plus(h['warps'])} / {_plus(o['warps'])}",
                f"{_plus(h['registers'])} / {_plus(o['registers'])}",
                f"{h['channels']}/{o['channels']}",
                f"{h['shared_memory'] / 1024:.0f}/{o['shared_memory'] / 1024:.0f}",
                str(len(r["overrides"])),
            )
        )
    return rows


def _plus(values: Sequence[int]) -> str:
    return "+".join(str(v) for v in values)


def _short_file(file: str) -> str:
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    return name[: -len(".ttgir")] if name.endswith(".ttgir") else name


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f} s"


def summary_lines(document: dict) -> list[str]:
    s = document["summary"]
    t = document["timing"]
    st = document["settings"]
    ob = s["optimal_better"]
    red = ob["ii_reduction"]
    n = s["loops"]
    lines = [
        f"{n} loop{'s' if n != 1 else ''} from {document['files']} file"
        f"{'s' if document['files'] != 1 else ''}; time limit {st['time_limit']:g} s per loop "
        f"(deterministic), {st['workers']} solver worker(s), seed {st['seed']}; "
        f"{t['jobs']} job(s), {t['total_wall_s']:.1f} s in all",
    ]
    if n:
        lines.append(
            f"optimal strictly better (lower modeled II) in {ob['loops']} of {n} loops "
            f"({_pct(ob['share'])})"
            + (
                f": II reduction median {_pct(red['median'])}, mean {_pct(red['mean'])}, "
                f"min {_pct(red['min'])}, max {_pct(red['max'])}"
                if ob["loops"]
                else ""
            )
        )
        lines.append(
            f"same II in {s['same_ii']} loops ({s['same_ii_better_objective']} of them "
            f"better on the tie-break: fewer partitions, warps, registers or channels); "
            f"heuristic better in {s['heuristic_better']}"
        )
        po = s["proven_optimal"]
        skipped = s["status"].get("SKIPPED", 0)
        lines.append(
            f"proven optimal: {po['loops']} of {po['solved']} solved loops ({_pct(po['share'])})"
            + (f"; {skipped} not solved (no load feeds an MMA)" if skipped else "")
        )
        lines.append(
            f"specialized: heuristic {s['specialized']['heuristic']}, "
            f"optimal {s['specialized']['optimal']} of {n} loops; "
            f"{s['loops_with_overrides']} loops where the optimum overrode the heuristic"
        )
        dep = s["departure"]
        lines.append(
            f"strategy optimal (departs only for a modeled gain over "
            f"{_pct(DEPARTURE_MARGIN)}, the model's measured error): the optimum in "
            f"{dep.get('optimum', 0)} loops, the heuristic's plan kept in "
            f"{dep.get('heuristic kept', 0)}, the same plan in {dep.get('same plan', 0)}"
        )
        ow = t["optimal_wall_s"]
        lines.append(
            f"optimal wall time per loop: p50 {_secs(ow['p50'])}, p90 {_secs(ow['p90'])}, "
            f"p99 {_secs(ow['p99'])}, max {_secs(ow['max'])}"
            + (f" ({t['plan_cache_hits']} from the plan cache)" if t["plan_cache_hits"] else "")
        )
    if s["failed"]:
        lines.append(f"{s['failed']} file(s) or loop(s) failed (see Failures)")
    return lines


def override_text(o: dict) -> str:
    if o["change"] == "specialize":
        return f"specialize: heuristic `{o['heuristic']}`; optimal `{o['optimal']}`"
    ends = (
        f"`{o['src_label']}` ({o['src']}, {o['src_op']}) and "
        f"`{o['dst_label']}` ({o['dst']}, {o['dst_op']})"
    )
    hp = " / ".join(_parts(p) for p in o["heuristic_partitions"])
    op = " / ".join(_parts(p) for p in o["optimal_partitions"])
    if o["change"] == "split":
        return f"split {ends}: heuristic rule `{o['rule']}` merged them ({hp}); optimal: {op}"
    return (
        f"joined {ends} over `{o['value']}` ({o['bytes']} B): the heuristic kept them apart "
        f"({hp}); optimal: {op}"
    )


def _parts(p: Sequence[int]) -> str:
    return "p" + ",".join(str(x) for x in p)


class Doc:
    """A small document: headings, paragraphs, lists, tables and images, rendered as
    Markdown or HTML. Inline `code` spans (backticks) are kept in Markdown, <code> in HTML."""

    def __init__(self) -> None:
        self.blocks: list[tuple] = []

    def heading(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def para(self, text: str) -> None:
        self.blocks.append(("p", text))

    def bullets(self, items: Sequence[str]) -> None:
        self.blocks.append(("ul", list(items)))

    def table(self, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]]) -> None:
        self.blocks.append(("table", list(columns), [list(r) for r in rows]))

    def image(self, name: str, alt: str) -> None:
        self.blocks.append(("img", name, alt))

    def markdown(self) -> str:
        out: list[str] = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                out.append("#" * block[1] + " " + block[2])
            elif kind == "p":
                out.append(block[1])
            elif kind == "ul":
                out.append("\n".join(f"- {item}" for item in block[1]))
            elif kind == "table":
                columns, rows = block[1], block[2]
                out.append("| " + " | ".join(_md_cell(c) for c, _ in columns) + " |")
                out[-1] += "\n|" + "|".join("---:" if a == "r" else "---" for _, a in columns)
                out[-1] += "|"
                for row in rows:
                    out[-1] += "\n| " + " | ".join(_md_cell(c) for c in row) + " |"
            elif kind == "img":
                out.append(f"![{block[2]}]({block[1]})")
        return "\n\n".join(out) + "\n"

    def html(self, title: str, images: dict[str, bytes] | None = None) -> str:
        images = images or {}
        body: list[str] = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                body.append(f"<h{block[1]}>{_inline(block[2])}</h{block[1]}>")
            elif kind == "p":
                body.append(f"<p>{_inline(block[1])}</p>")
            elif kind == "ul":
                items = "".join(f"<li>{_inline(i)}</li>" for i in block[1])
                body.append(f"<ul>{items}</ul>")
            elif kind == "table":
                columns, rows = block[1], block[2]
                head = "".join(
                    f'<th class="{"r" if a == "r" else "l"}">{html.escape(c)}</th>'
                    for c, a in columns
                )
                lines = [f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>']
                for row in rows:
                    cells = "".join(
                        f'<td class="{"r" if a == "r" else "l"}">{_inline(c)}</td>'
                        for c, (_, a) in zip(row, columns, strict=True)
                    )
                    lines.append(f"<tr>{cells}</tr>")
                lines.append("</tbody></table></div>")
                body.append("\n".join(lines))
            elif kind == "img":
                name, alt = block[1], block[2]
                data = images.get(name)
                src = (
                    "data:image/png;base64," + base64.b64encode(data).decode("ascii")
                    if data is not None
                    else html.escape(name)
                )
                body.append(f'<figure><img src="{src}" alt="{html.escape(alt)}"></figure>')
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body)
            + "\n</body>\n</html>\n"
        )


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; white-space: nowrap; }
th { background: #f3f3f3; } tr:nth-child(even) td { background: #fafafa; }
td.r, th.r { text-align: right; } td.l, th.l { text-align: left; }
code { background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; font-size: 0.95em; }
figure { margin: 1em 0; } img { max-width: 100%; border: 1px solid #eee; }
li { margin: 0.2em 0; } .scroll { overflow-x: auto; }
"""


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _inline(text: str) -> str:
    """HTML for text with `code` spans."""
    parts = text.split("`")
    out = []
    for i, part in enumerate(parts):
        escaped = html.escape(part)
        out.append(f"<code>{escaped}</code>" if i % 2 else escaped)
    if len(parts) % 2 == 0:  # an unmatched backtick: keep it
        out[-1] = "`" + out[-1].removeprefix("<code>").removesuffix("</code>")
    return "".join(out)


def build_doc(document: dict, images: Sequence[tuple[str, str]] = ()) -> Doc:
    """The report for people. `images`: (file name, caption) of the plots to show."""
    doc = Doc()
    doc.heading(1, "ws-solver: heuristic vs optimal warp specialization")
    doc.para(
        "Modeled steady-state iteration time (II, cycles) of each warp-specialized loop "
        "under the heuristic seed and under CP-SAT (warm-started from the heuristic). "
        "Lower is better; bound is the solver's proven lower bound on II."
    )
    doc.heading(2, "Summary")
    doc.bullets(summary_lines(document))
    s = document["summary"]
    if s["loops"]:
        doc.heading(3, "II reduction where optimal is strictly better")
        rows = [("0% (same II)", str(s["same_ii"]))]
        for b in s["optimal_better"]["histogram"]:
            rows.append((f"{b['above']:.0%} < r ≤ {b['up_to']:.0%}", str(b["loops"])))
        if s["heuristic_better"]:
            rows.append(("heuristic better", str(s["heuristic_better"])))
        doc.table((("II reduction r", "l"), ("loops", "r")), rows)
        if s["split_rules"]:
            doc.para(
                "Heuristic rules whose merges the optimum split, with the number of splits: "
                + ", ".join(f"`{rule}` {n}" for rule, n in s["split_rules"].items())
                + "."
            )
    for name, caption in images:
        doc.heading(3, caption)
        doc.image(name, caption)
    if document["loops"]:
        doc.heading(2, "Per loop")
        doc.para(
            "H = heuristic, O = optimal; warps and registers (setmaxnreg) per partition; "
            "ΔII relative to the heuristic; time = wall time of the optimal strategy "
            "(heuristic seed + CP-SAT)."
        )
        doc.table(TABLE_COLUMNS, loop_rows(document))
    overridden = [r for r in document["loops"] if r["overrides"]]
    if overridden:
        doc.heading(2, "Where the optimum overrode the heuristic")
        for r in overridden:
            against = (
                " (against the plan the heuristic built and declined)"
                if r["overrides_against"] != "plan"
                else ""
            )
            doc.heading(
                3,
                f"{_short_file(r['file'])} · {r['kernel']} loop {r['loop']}: II "
                f"{r['heuristic']['ii']} → {r['optimal']['ii']}{against}",
            )
            items = [override_text(o) for o in r["overrides"][:MAX_OVERRIDES]]
            if len(r["overrides"]) > MAX_OVERRIDES:
                items.append(f"… and {len(r['overrides']) - MAX_OVERRIDES} more (see the JSON)")
            doc.bullets(items)
    if document["failures"]:
        doc.heading(2, "Failures")
        doc.bullets(
            [
                f"`{f['file']}`"
                + (f" {f['kernel']} loop {f['loop']}" if f["loop"] is not None else "")
                + f" ({f['kind']}): {f['message']}"
                for f in document["failures"]
            ]
        )
    return doc


MAX_OVERRIDES = 12


def to_markdown(document: dict, images: Sequence[tuple[str, str]] = ()) -> str:
    return build_doc(document, images).markdown()


def to_html(document: dict, images: Sequence[tuple[str, str, bytes]] = ()) -> str:
    """Self-contained HTML: the plots (name, caption, PNG bytes) are embedded."""
    doc = build_doc(document, [(name, caption) for name, caption, _ in images])
    return doc.html("ws-solver compare", {name: data for name, _, data in images})


def to_text(document: dict) -> str:
    """Plain text for a terminal: the per-loop table, then the summary."""
    from .graph import _align

    columns = tuple(c for c, _ in TABLE_COLUMNS)
    right = {i for i, (_, a) in enumerate(TABLE_COLUMNS) if a == "r"}
    out = []
    if document["loops"]:
        out.append(_align([columns, *loop_rows(document)], right))
    out.extend(summary_lines(document))
    for f in document["failures"]:
        where = f" {f['kernel']} loop {f['loop']}" if f["loop"] is not None else ""
        out.append(f"failed: {f['file']}{where} ({f['kind']}): {f['message']}")
    return "\n".join(out) + "\n"

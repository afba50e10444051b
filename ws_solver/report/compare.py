"""The comparison document (`ws_solver.pipeline.comparison`) for people and tools: JSON, and one
document model rendered as text, Markdown or HTML."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence

from ..core.wording import count
from ..model.decision import DEPARTURE_MARGIN
from ..model.lowering_facts import DEFAULT_TRITON


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
# With `compare --triton-plan`: Triton's own plan (the seed) beside the heuristic's.
SEED_COLUMNS = (("II seed", "r"), ("seed vs H", "l"))
# Stock Triton's decision, where the dump recorded it (ws_solver.pipeline.stock).
STOCK_COLUMNS = (("stock", "l"),)
STOCK_WORDS = {"specialized": "WS", "unspecialized": "no WS", "fails": "fails"}
DIFFERS = "≠"


def _has_stock(document: dict) -> bool:
    return "stock" in document.get("summary", {})


def table_columns(document: dict) -> tuple[tuple[str, str], ...]:
    columns = TABLE_COLUMNS + (STOCK_COLUMNS if _has_stock(document) else ())
    return columns + SEED_COLUMNS if "seed" in document else columns


def _stock_cells(record: dict) -> tuple[str]:
    stock = record.get("stock")
    if stock is None:
        return ("-",)
    word = STOCK_WORDS.get(stock["decision"], stock["decision"])
    return (f"{word} {DIFFERS}" if stock.get("differs") else word,)


def _seed_cells(record: dict) -> tuple[str, str]:
    seed = record.get("seed")
    if seed is None or "error" in seed:
        return ("-", "failed" if seed else "-")
    return (
        str(seed["seed"]["ii"]),
        "same" if seed["agree"] else f"{len(seed['differing'])} differ",
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
            + (_stock_cells(r) if _has_stock(document) else ())
            + (_seed_cells(r) if "seed" in document else ())
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
        f"{count(n, 'loop')} from {count(document['files'], 'file')}; time limit "
        f"{st['time_limit']:g} s per loop (deterministic), "
        f"{count(st['workers'], 'solver worker')}, seed {st['seed']}; "
        f"{count(t['jobs'], 'job')}, {t['total_wall_s']:.1f} s in all",
    ]
    if st.get("triton", DEFAULT_TRITON) != DEFAULT_TRITON:
        lines.append(f"planned for Triton {st['triton']}'s lowering rules")
    if t.get("backend", {}).get("backend", "local") != "local":
        from ..backends import stats_line

        lines.append(stats_line(t["backend"]))
    if n:
        lines.append(
            f"optimal strictly better (lower modeled II) in {ob['loops']} of {count(n, 'loop')} "
            f"({_pct(ob['share'])})"
            + (
                f": II reduction median {_pct(red['median'])}, mean {_pct(red['mean'])}, "
                f"min {_pct(red['min'])}, max {_pct(red['max'])}"
                if ob["loops"]
                else ""
            )
        )
        lines.append(
            f"same II in {count(s['same_ii'], 'loop')} ({s['same_ii_better_objective']} of them "
            f"better on the tie-break: fewer partitions, warps, registers or channels); "
            f"heuristic better in {s['heuristic_better']}"
        )
        po = s["proven_optimal"]
        skipped = s["status"].get("SKIPPED", 0)
        lines.append(
            f"proven optimal: {po['loops']} of {count(po['solved'], 'solved loop')} "
            f"({_pct(po['share'])})"
            + (f"; {skipped} not solved (no load feeds an MMA)" if skipped else "")
        )
        lines.append(
            f"specialized: heuristic {s['specialized']['heuristic']}, "
            f"optimal {s['specialized']['optimal']} of {count(n, 'loop')}; "
            f"{count(s['loops_with_overrides'], 'loop')} where the optimum overrode the heuristic"
        )
        dep = s["departure"]
        lines.append(
            f"strategy optimal (departs only for a modeled gain over "
            f"{_pct(DEPARTURE_MARGIN)}, the model's measured error): the optimum in "
            f"{count(dep.get('optimum', 0), 'loop')}, the heuristic's plan kept in "
            f"{dep.get('heuristic kept', 0)}, the same plan in {dep.get('same plan', 0)}"
        )
        ow = t["optimal_wall_s"]
        lines.append(
            f"optimal wall time per loop: p50 {_secs(ow['p50'])}, p90 {_secs(ow['p90'])}, "
            f"p99 {_secs(ow['p99'])}, max {_secs(ow['max'])}"
            + (f" ({t['plan_cache_hits']} from the plan cache)" if t["plan_cache_hits"] else "")
        )
        if t.get("plan_cache_replaced"):
            lines.append(
                f"plan cache: {count(t['plan_cache_replaced'], 'bad record')} solved again"
            )
    if n and _has_stock(document):
        lines.append(stock_line(s["stock"]))
    if "seed" in document:
        sd = document["seed"]
        lines.append(
            f"Triton {sd['triton']}'s own scheduler (the seed): the heuristic's partitioning "
            f"in {sd['agree']} of {count(sd['loops'], 'loop')}"
            + (f"; {count(sd['failed'], 'loop')} it could not be run on" if sd["failed"] else "")
        )
    if s["failed"]:
        lines.append(
            f"{count(s['failed'], 'file or loop', 'files or loops')} failed (see Failures)"
        )
    return lines


def stock_line(st: dict) -> str:
    """The summary's line on stock Triton's decisions (comparison.summarize's `stock`)."""
    where = ", ".join(st["recorded_for"])
    line = (
        f"stock Triton's decision (recorded with the dumps{': ' + where if where else ''}): "
        f"known for {st['known']} of {count(st['loops'], 'loop')}; ws_solver decides otherwise "
        f"({DIFFERS}) in {st['differs']} of them ({st['ours_only']} specialized where stock "
        f"does not, {st['stock_only']} not where stock does)"
    )
    if st["fails"]:
        line += f"; stock fails on {st['fails']}"
    if st["unknown"]:
        line += f"; unknown for {st['unknown']} (no recorded decision for the file)"
    return line


def stock_failures(document: dict) -> list[str]:
    """One line per file whose kernel stock Triton fails to compile, with its reason."""
    seen: dict[str, str] = {}
    for r in document["loops"]:
        stock = r.get("stock") or {}
        if stock.get("decision") == "fails":
            seen.setdefault(r["file"], stock.get("reason", ""))
    return [f"`{_short_file(f)}`: {why}" for f, why in seen.items()]


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
            + (
                " stock = stock Triton's decision for the loop (WS: warp-specialized), as "
                f"recorded with the dump; {DIFFERS}: ws_solver's decision (the optimal "
                "strategy's) differs."
                if _has_stock(document)
                else ""
            )
        )
        doc.table(table_columns(document), loop_rows(document))
        failing = stock_failures(document)
        if failing:
            doc.heading(3, "Where stock Triton fails")
            doc.bullets(failing)
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

    columns = tuple(c for c, _ in table_columns(document))
    right = {i for i, (_, a) in enumerate(table_columns(document)) if a == "r"}
    out = []
    if document["loops"]:
        out.append(_align([columns, *loop_rows(document)], right))
    out.extend(summary_lines(document))
    out.extend(f"stock fails: {line.replace('`', '')}" for line in stock_failures(document))
    for f in document["failures"]:
        where = f" {f['kernel']} loop {f['loop']}" if f["loop"] is not None else ""
        out.append(f"failed: {f['file']}{where} ({f['kind']}): {f['message']}")
    return "\n".join(out) + "\n"

"""A plan drawn on its loop graph: nodes coloured by partition, crossing edges marked with the
bytes they carry, a legend with each partition's warps, registers and modeled busy time.

As plain text (for a terminal), Graphviz DOT, or an SVG/PNG image drawn with matplotlib and
networkx (no Graphviz needed).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from ..core.wording import count
from ..model.cost import Cost
from ..model.cost_table import cost_table, region_warps
from ..model.graph import Edge, LoopGraph
from ..model.kinds import NodeRole
from ..model.plan import Plan
from ..model.target import Target
from .graph import _align, _depth, _escape, _quote, _size

# Partition colours (colour-blind friendly, light enough for black labels).
PALETTE = (
    "#8ecae6",
    "#ffb703",
    "#90be6d",
    "#f4978e",
    "#c3aed6",
    "#f9c74f",
    "#76c7c0",
    "#e0b1cb",
)
CROSSING_COLOR = "#d62828"


def partition_color(p: int) -> str:
    return PALETTE[p % len(PALETTE)]


@dataclass
class Explained:
    """One loop and the plan a strategy chose for it."""

    file: str
    graph: LoopGraph
    target: Target
    strategy: str
    plan: Plan
    reason: str
    cost: Cost  # evaluate(plan, graph, target)
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Crossing:
    edge: Edge
    src_parts: tuple[int, ...]
    missing: tuple[int, ...]  # partitions of the consumer that the producer is not in
    depths: tuple[int | None, ...]  # channel depth per missing partition (None: no channel)


def crossings(graph: LoopGraph, plan: Plan) -> list[Crossing]:
    """Edges whose value must reach a partition its producer does not run in."""
    out = []
    for e in graph.edges:
        if graph.nodes[e.dst].role == NodeRole.TERMINATOR and graph.nodes[e.dst].parent is None:
            continue  # the loop's own yield runs everywhere; its inputs are the carried values
        src, dst = plan.partitions_of(e.src), plan.partitions_of(e.dst)
        missing = tuple(q for q in dst if q not in src)
        if missing:
            depths = tuple(plan.channel_depth(e.src, q) for q in missing)
            out.append(Crossing(e, src, missing, depths))
    return out


def _parts(parts) -> str:
    return ",".join(f"p{p}" for p in parts) or "-"


def _header(x: Explained) -> list[str]:
    g, cost = x.graph, x.cost
    lines = [
        f"== {x.file}  kernel {g.kernel}  loop {g.loop_index} (line {g.line})  "
        f"target {x.target.name}  strategy {x.strategy}",
        f"decision: {x.reason}",
    ]
    status = x.details.get("status")
    solver = f"; solver {status}" if status else ""
    if x.details.get("gap") is not None:
        solver += f", gap {x.details['gap']:.1%}"
    lines.append(f"modeled II {cost.ii} cycles per iteration (set by {cost.bound_by}){solver}")
    return lines


def legend_lines(x: Explained) -> list[str]:
    """One line per partition: role, warps, registers, busy cycles, ops."""
    cost = x.cost
    busy = {p.id: p for p in cost.partitions}
    out = []
    for p in x.plan.partitions:
        ops = sum(1 for n in x.plan.nodes_in(p.id) if x.graph.nodes[n].role == NodeRole.OP)
        out.append(
            f"p{p.id} {p.role or '-'}: {count(p.warps, 'warp')}, {p.registers} registers, "
            f"busy {count(busy[p.id].busy, 'cycle')}, {count(ops, 'op')}"
        )
    return out


def lowered_warps_lines(x: Explained) -> list[str]:
    """Where the binary's warps may differ from the plan's: Triton runs the default region
    (partition 0) at the kernel's warps and sizes every other region itself
    (`optimize_partition_warps`, which halves a region's warps while its largest register
    tensor fits); the fewest it can leave is `cost_table.region_warps`. Empty when every
    partition runs the plan's warps, or the loop is not specialized."""
    if not x.plan.specialized:
        return []
    table = cost_table(x.graph, x.target)
    num_warps = x.graph.num_warps
    notes = []
    for p in x.plan.partitions:
        name = f"p{p.id} {p.role or '-'}"
        if p.id == 0 and p.warps != num_warps:
            notes.append(
                f"  {name}: planned at {count(p.warps, 'warp')}, runs the kernel's {num_warps} "
                "(the default region)"
            )
        elif p.id != 0:
            fewest = region_warps(table, x.plan.nodes_in(p.id))
            if fewest < p.warps:
                notes.append(
                    f"  {name}: planned at {count(p.warps, 'warp')}, may compile to as few as "
                    f"{fewest}"
                )
    if not notes:
        return []
    head = (
        "warps in the binary: Triton's optimize_partition_warps sizes each partition region "
        f"itself (halving the kernel's {num_warps} warps while the region's largest register "
        "tensor fits), not by the plan; a drop-in compile report's `lowered` lists the warps "
        "it kept:"
    )
    return [head, *notes]


def explain_text(x: Explained) -> str:
    g, plan, cost = x.graph, x.plan, x.cost
    lines = _header(x)
    lines.append("")
    lines.append("partitions:")
    lines += [f"  {line}" for line in legend_lines(x)]
    lines.append(
        f"  channels {cost.channels} ({_size(cost.channel_bytes)} buffered), shared memory "
        f"{_size(cost.shared_memory)}, {count(cost.total_warps, 'warp')}, register file "
        f"{cost.register_file} of {x.target.registers_per_sm}"
    )
    lowered = lowered_warps_lines(x)
    if lowered:
        lines += ["", *lowered]
    lines.append("")
    rows = [("id", "partitions", "kind", "op", "label")]
    for node in g.nodes:
        rows.append(
            (
                str(node.id),
                _parts(plan.partitions_of(node.id)),
                node.kind.value,
                "  " * _depth(g, node) + node.op_name,
                node.label,
            )
        )
    lines.append(_align(rows, {0}, free_last=True))
    cross = crossings(g, plan)
    lines.append("")
    lines.append(f"crossing edges ({len(cross)}):" if cross else "crossing edges: none")
    for c in cross:
        e = c.edge
        depth = ", ".join(
            f"p{q} depth {d}" if d is not None else f"p{q} (no channel)"
            for q, d in zip(c.missing, c.depths, strict=True)
        )
        lines.append(
            f"  {e.src} {g.nodes[e.src].label} [{_parts(c.src_parts)}] -> {e.dst} "
            f"{g.nodes[e.dst].label}: {e.value}, {_size(e.bytes)}"
            f"{', loop-carried' if e.distance else ''}; to {depth}"
        )
    return "\n".join(lines) + "\n"


def explain_dot(x: Explained) -> str:
    g, plan = x.graph, x.plan
    title = "\\n".join(_escape(line) for line in _header(x))
    lines = [
        f"digraph {_quote(f'{x.file}:{g.name}:{x.strategy}')} {{",
        f'  graph [label="{title}", labelloc=t, fontname="Helvetica"];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9, color="#777777"];',
    ]
    for node in g.nodes:
        parts = plan.partitions_of(node.id)
        colors = [partition_color(p) for p in parts] or ["#ffffff"]
        label = (
            f"{node.id} {_escape(node.kind.value)} [{_parts(parts)}]\\n"
            f"{_escape(node.op_name)}\\n{_escape(node.label)}"
        )
        attrs = [f'label="{label}"', f'fillcolor="{":".join(colors)}"']
        if len(colors) > 1:
            attrs.append('style="filled,wedged"' if node.is_value else 'style="filled,striped"')
        if node.is_value:
            attrs.append("shape=ellipse")
        lines.append(f"  n{node.id} [{', '.join(attrs)}];")
    crossing = {(c.edge.src, c.edge.dst, c.edge.value): c for c in crossings(g, plan)}
    for e in g.edges:
        attrs = []
        if e.distance:
            attrs += ["style=dashed", "constraint=false"]
        c = crossing.get((e.src, e.dst, e.value))
        if c is not None:
            attrs += [
                f'color="{CROSSING_COLOR}"',
                "penwidth=2",
                f'label="{_escape(e.value)}\\n{_size(e.bytes)}"',
                f'fontcolor="{CROSSING_COLOR}"',
            ]
        lines.append(f"  n{e.src} -> n{e.dst}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("  subgraph cluster_legend {")
    lines.append('    label="partitions"; style="solid"; color="#bbbbbb";')
    for p, text in zip(plan.partitions, legend_lines(x), strict=True):
        lines.append(
            f'    legend_p{p.id} [label="{_escape(text)}", shape=box, style=filled, '
            f'fillcolor="{partition_color(p.id)}"];'
        )
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _layers(graph: LoopGraph) -> dict[int, int]:
    """Row of each node: longest path from a source over same-iteration edges."""
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(n.id for n in graph.nodes)
    dag.add_edges_from((e.src, e.dst) for e in graph.edges if e.distance == 0 and e.src != e.dst)
    if not nx.is_directed_acyclic_graph(dag):
        return {n.id: i // 6 for i, n in enumerate(graph.nodes)}
    layer: dict[int, int] = {}
    for n in nx.topological_sort(dag):
        layer[n] = max((layer[p] + 1 for p in dag.predecessors(n)), default=0)
    return layer


def explain_image(x: Explained, fmt: str) -> bytes:
    """The drawing as SVG or PNG bytes."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import networkx as nx
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    g, plan = x.graph, x.plan
    layer = _layers(g)
    rows: dict[int, list[int]] = {}
    for n in sorted(layer):
        rows.setdefault(layer[n], []).append(n)
    widest = max(len(r) for r in rows.values())
    pos = {}
    for row, members in rows.items():
        for i, n in enumerate(members):
            pos[n] = ((i - (len(members) - 1) / 2) * 1.6, -row * 1.0)
    width = max(9.0, 1.5 * widest + 2)
    height = max(6.0, 0.95 * len(rows) + 3.5)
    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot(1, 1, 1)
    ax.set_axis_off()

    nxg = nx.DiGraph()
    nxg.add_nodes_from(pos)
    cross = crossings(g, plan)
    crossing_pairs = {(c.edge.src, c.edge.dst) for c in cross}
    plain = [(e.src, e.dst) for e in g.edges if e.distance == 0 and e.src != e.dst]
    carried = [(e.src, e.dst) for e in g.edges if e.distance and e.src != e.dst]
    plain_edges = [p for p in plain if p not in crossing_pairs]
    carried_edges = [p for p in carried if p not in crossing_pairs]
    nxg.add_edges_from(plain + carried)
    common = {"ax": ax, "arrows": True, "arrowsize": 10, "node_size": 900}
    nx.draw_networkx_edges(nxg, pos, edgelist=plain_edges, edge_color="#999999", **common)
    nx.draw_networkx_edges(
        nxg,
        pos,
        edgelist=carried_edges,
        edge_color="#999999",
        style="dashed",
        connectionstyle="arc3,rad=0.3",
        **common,
    )
    nx.draw_networkx_edges(
        nxg,
        pos,
        edgelist=sorted(crossing_pairs),
        edge_color=CROSSING_COLOR,
        width=2.0,
        **common,
    )
    labels = {}
    for c in cross:
        key = (c.edge.src, c.edge.dst)
        labels[key] = _size(c.edge.bytes) if c.edge.bytes else "sync"
    nx.draw_networkx_edge_labels(
        nxg, pos, edge_labels=labels, ax=ax, font_size=7, font_color=CROSSING_COLOR
    )
    for n in g.nodes:
        parts = plan.partitions_of(n.id)
        color = partition_color(parts[0]) if parts else "#ffffff"
        shared = len(parts) > 1
        nx.draw_networkx_nodes(
            nxg,
            pos,
            nodelist=[n.id],
            node_color=[color],
            node_shape="o" if n.is_value else "s",
            node_size=900,
            edgecolors="#222222" if shared else "#666666",
            linewidths=2.5 if shared else 0.8,
            ax=ax,
        )
    node_labels = {
        n.id: f"{n.id} {n.kind.value}\n{_short(n.label)}" for n in g.nodes if n.id in pos
    }
    nx.draw_networkx_labels(nxg, pos, labels=node_labels, font_size=6, ax=ax)
    handles = [
        Patch(facecolor=partition_color(p.id), edgecolor="#666666", label=text)
        for p, text in zip(plan.partitions, legend_lines(x), strict=True)
    ]
    handles += [
        Line2D([], [], color=CROSSING_COLOR, linewidth=2, label="crossing edge (bytes)"),
        Line2D([], [], color="#999999", linestyle="dashed", label="loop-carried edge"),
        Patch(facecolor="white", edgecolor="#222222", linewidth=2.5, label="in several partitions"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_title("\n".join(_header(x)), fontsize=9, loc="left")
    figure.tight_layout()
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    figure.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


def _short(label: str, limit: int = 14) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"

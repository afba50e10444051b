"""Loop graphs as text listings, JSON, Graphviz DOT and a one-row-per-loop summary table.

Every function takes `(file, graph)` pairs: `file` is the path shown to the user (the graph
itself does not know where its TTGIR came from). The JSON structure is a stable interface,
documented in docs/json-schemas.md ("`graph --format json`"); bump `SCHEMA_VERSION` when it
changes incompatibly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..model.graph import Edge, LoopGraph, Node
from ..model.kinds import NodeKind, NodeRole
from ..model.target import target_for

SCHEMA = "ws-solver.graph"
SCHEMA_VERSION = 1

FileGraph = tuple[str, LoopGraph]

# -- text -----------------------------------------------------------------------------------


def graph_text(file: str, graph: LoopGraph) -> str:
    """A header line, then one line per node with its out-edges."""
    header = (
        f"== {file}  kernel {graph.kernel}  loop {graph.loop_index} (line {graph.line})  "
        f"target {graph.target or '?'}  num_warps {graph.num_warps}  "
        f"nodes {len(graph.nodes)}  edges {len(graph.edges)}"
    )
    columns = ("id", "kind", "role", "op", "label", "elements", "bytes", "stage", "out-edges")
    rows = []
    for node in graph.nodes:
        edges = ", ".join(_edge_text(e) for e in graph.out_edges(node.id))
        rows.append(
            (
                str(node.id),
                node.kind.value,
                node.role.value,
                "  " * _depth(graph, node) + node.op_name,
                node.label,
                str(node.elements),
                str(node.out_bytes),
                "-" if node.stage is None else str(node.stage),
                edges or "-",
            )
        )
    right = {0, 5, 6, 7}  # numeric columns
    return header + "\n" + _align([columns, *rows], right, free_last=True) + "\n"


def _edge_text(e: Edge) -> str:
    return f"→ {e.dst} ({e.value}, {e.bytes} B, d={e.distance})"


def _depth(graph: LoopGraph, node: Node) -> int:
    depth, parent = 0, node.parent
    while parent is not None:
        depth += 1
        parent = graph.node(parent).parent
    return depth


def _align(rows: Sequence[Sequence[str]], right: set[int], free_last: bool = False) -> str:
    """Columns padded to their widest cell (`right`: right-aligned columns); with
    `free_last` the last column is left as it is (it may be long)."""
    padded = len(rows[0]) - 1 if free_last else len(rows[0])
    widths = [max(len(r[i]) for r in rows) for i in range(padded)]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row[:padded])
        ]
        lines.append("  ".join([*cells, *row[padded:]]).rstrip())
    return "\n".join(lines)


# -- JSON -----------------------------------------------------------------------------------


def graph_json(loops: Iterable[FileGraph]) -> str:
    document = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "loops": [graph_dict(file, graph) for file, graph in loops],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def graph_dict(file: str, graph: LoopGraph) -> dict:
    """One loop as plain JSON data; field names follow `ws_solver.model.graph`."""
    return {
        "file": file,
        "kernel": graph.kernel,
        "loop_index": graph.loop_index,
        "name": graph.name,
        "target": graph.target,
        "num_warps": graph.num_warps,
        "line": graph.line,
        "scheduled_max_stage": graph.scheduled_max_stage,
        "buffers": [
            {"name": b.name, "memory": b.memory, "bytes": b.bytes, "inside_loop": b.inside_loop}
            for b in graph.loop_buffers
        ],
        "nodes": [_node_dict(n) for n in graph.nodes],
        "edges": [_edge_dict(e) for e in graph.edges],
    }


def _node_dict(n: Node) -> dict:
    mma = None
    if n.mma is not None:
        mma = {
            "m": n.mma.m,
            "n": n.mma.n,
            "k": n.mma.k,
            "operand_type": n.mma.operand_type,
            "accumulator_in_registers": n.mma.accumulator_in_registers,
            "flops": n.mma.flops,
        }
    return {
        "id": n.id,
        "role": n.role.value,
        "kind": n.kind.value,
        "op_name": n.op_name,
        "label": n.label,
        "op_index": n.op_index,
        "result_index": n.result_index,
        "parent": n.parent,
        "follows_parent": n.follows_parent,
        "value_kind": n.value_kind,
        "elements": n.elements,
        "out_bytes": n.out_bytes,
        "io_bytes": n.io_bytes,
        "mma": mma,
        "buffers": [b.name for b in n.buffers],
        "stage": n.stage,
        "cluster": n.cluster,
        "line": n.line,
        "location": n.location,
    }


def _edge_dict(e: Edge) -> dict:
    return {
        "src": e.src,
        "dst": e.dst,
        "distance": e.distance,
        "value": e.value,
        "value_kind": e.value_kind,
        "bytes": e.bytes,
        "elements": e.elements,
        "memory": e.memory,
        "carried_by": e.carried_by,
        "use": list(e.use) if e.use is not None else None,
    }


# -- Graphviz -------------------------------------------------------------------------------

KIND_COLORS = {
    NodeKind.LOAD: "#9ecae1",
    NodeKind.STORE: "#fdae6b",
    NodeKind.MMA: "#fdd835",
    NodeKind.TMEM: "#c5a3e0",
    NodeKind.SFU: "#a1d99b",
    NodeKind.VIEW: "#e0e0e0",
    NodeKind.REDUCE: "#f4a6a6",
    NodeKind.SCALAR: "#ffffff",
    NodeKind.NONE: "#d6eef5",
}


def graph_dot(file: str, graph: LoopGraph) -> str:
    """A digraph: region ops are clusters, distance-1 edges dashed, nodes coloured by kind."""
    title = (
        _escape(file)
        + "\\n"
        + _escape(
            f"{graph.kernel} loop {graph.loop_index} · {graph.target or '?'} · "
            f"{graph.num_warps} warps"
        )
    )
    lines = [
        f"digraph {_quote(f'{file}:{graph.name}')} {{",
        f'  graph [label="{title}", labelloc=t, fontname="Helvetica", compound=true];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    children: dict[int | None, list[Node]] = {}
    for node in graph.nodes:
        children.setdefault(node.parent, []).append(node)

    def emit(nodes: list[Node], indent: str) -> None:
        for node in nodes:
            if node.id in children:  # a region op: a cluster with the op and its body
                lines.append(f"{indent}subgraph cluster_{node.id} {{")
                cluster_label = _escape(f"{node.op_name} {node.label}")
                lines.append(f'{indent}  label="{cluster_label}"; style="dashed";')
                lines.append(f"{indent}  {_node_line(node)}")
                emit(children[node.id], indent + "  ")
                lines.append(f"{indent}}}")
            else:
                lines.append(f"{indent}{_node_line(node)}")

    emit(children.get(None, []), "  ")
    for e in graph.edges:
        attrs = [f'label="{_escape(e.value)}\\n{_size(e.bytes)}"']
        if e.distance:
            attrs.append("style=dashed")
            attrs.append("constraint=false")
        lines.append(f"  n{e.src} -> n{e.dst} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(node: Node) -> str:
    text = f"{node.id} {node.kind.value}\\n{_escape(node.op_name)}\\n{_escape(node.label)}"
    attrs = [f'label="{text}"', f'fillcolor="{KIND_COLORS[node.kind]}"']
    if node.role in (NodeRole.ITER_ARG, NodeRole.IF_RESULT):
        attrs.append("shape=ellipse")
    elif node.role == NodeRole.TERMINATOR:
        attrs.append('style="rounded,dotted"')
    return f"n{node.id} [{', '.join(attrs)}];"


def _escape(text: str) -> str:
    """Text for inside a double-quoted DOT string (`\\n` line breaks are added by callers)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _quote(text: str) -> str:
    return f'"{_escape(text)}"'


def _size(n: int) -> str:
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


# -- summary table --------------------------------------------------------------------------

TABLE_KINDS = (NodeKind.LOAD, NodeKind.MMA, NodeKind.STORE, NodeKind.SFU, NodeKind.TMEM)


def summary_table(loops: Sequence[FileGraph]) -> str:
    """One row per loop: file, kernel, loop, target, op/value/edge counts, counts per kind."""
    columns = ("file", "kernel", "loop", "target", "ops", "values", "edges")
    columns += tuple(k.value for k in TABLE_KINDS)
    rows = [columns]
    for file, graph in loops:
        ops = sum(n.role == NodeRole.OP for n in graph.nodes)
        values = sum(n.role in (NodeRole.ITER_ARG, NodeRole.IF_RESULT) for n in graph.nodes)
        row = (file, graph.kernel, str(graph.loop_index), _target_name(graph.target))
        row += (str(ops), str(values), str(len(graph.edges)))
        row += tuple(str(len(graph.of_kind(k))) for k in TABLE_KINDS)
        rows.append(row)
    right = set(range(2, len(columns))) - {3}
    return _align(rows, right) + "\n"


def _target_name(target: str) -> str:
    try:
        return target_for(target).name
    except ValueError:
        return target or "?"

"""Where a minimal pair of ``lowering_pairs.json`` is lowered on the installed Triton.

A pair's plan names nodes by label (SSA names of the TTGIR it was probed on: the 3.6 corpus,
or the archived copy its ``ttgir_dir`` names). Another Triton version dumps the same kernel
with other SSA names, and its text is the only one that version parses. So a pair is lowered
on the installed version's corpus file of the same name, its labels carried over node by node,
but only when the loop graphs are the same: the same number of WS loops, and per loop the same
nodes (op, kind, role) in the same order. Otherwise the pair is skipped, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ws_solver import ir
from ws_solver.model.dfg import build_graph, ws_loops
from ws_solver.model.graph import LoopGraph

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBED_ON = "3.6.0"  # the Triton version of a pair that does not name one ("triton")


@dataclass(frozen=True)
class ResolvedPair:
    """A pair as the installed Triton lowers it: its TTGIR and its spec in that file's labels."""

    pair: dict
    path: Path
    mapped_from: Path | None = None  # the file its labels were translated from, if any


def source_path(pair: dict) -> Path:
    """The TTGIR the pair was probed on (its labels are that file's SSA names)."""
    return REPO_ROOT / pair.get("ttgir_dir", "corpus/ttgir") / pair["file"]


def loop_graphs(path: Path) -> list[LoopGraph]:
    module = ir.parse(path.read_text())
    return [build_graph(module, loop) for loop in ws_loops(module)]


def _shape(graph: LoopGraph) -> list[tuple[str, str, str]]:
    return [(n.op_name, n.kind.value, n.role.value) for n in graph.nodes]


def graph_difference(before: list[LoopGraph], after: list[LoopGraph]) -> str:
    """Why two files' loop graphs are not the same, or "" when they are."""
    if len(before) != len(after):
        return f"{len(before)} WS loops against {len(after)}"
    for index, (a, b) in enumerate(zip(before, after, strict=True)):
        if len(a.nodes) != len(b.nodes):
            return f"loop {index}: {len(a.nodes)} nodes against {len(b.nodes)}"
        for x, y in zip(_shape(a), _shape(b), strict=True):
            if x != y:
                return f"loop {index}: {x[0]} ({x[1]}) against {y[0]} ({y[1]})"
    return ""


def _label_map(before: LoopGraph, after: LoopGraph) -> dict[str, str]:
    """Each label of ``before`` → the label of the same nodes in ``after`` (one-to-one)."""
    out: dict[str, str] = {}
    for node in before.nodes:
        new = after.nodes[node.id].label
        if out.setdefault(node.label, new) != new:
            raise ValueError(f"label {node.label!r} names nodes that {after.name} labels apart")
    if len(set(out.values())) != len(out):
        raise ValueError(f"{after.name} gives one label to nodes {before.name} labels apart")
    return out


def _translated(pair: dict, maps: list[dict[str, str]]) -> dict:
    def label(loop: int, old: str) -> str:
        if old not in maps[loop]:
            raise ValueError(f"no node labelled {old!r} in loop {loop}")
        return maps[loop][old]

    loops = [
        {**spec, "assign": {label(i, k): v for k, v in spec["assign"].items()}}
        for i, spec in enumerate(pair["loops"])
    ]
    change = list(pair["change"])
    if change[0] == "move":
        change[1] = label(pair.get("loop", 0), change[1])
    return {**pair, "loops": loops, "change": change}


def resolve(pair: dict, corpus: Path, installed: str) -> ResolvedPair | str:
    """The pair on the installed version (corpus folder ``corpus``, version ``installed``), or
    one line saying why it cannot be lowered there."""
    source = source_path(pair)
    if pair.get("triton", PROBED_ON) == installed:
        return ResolvedPair(pair, source)
    target = corpus / pair["file"]
    if not target.exists():
        return f"no {pair['file']} in {corpus.name}"
    before, after = loop_graphs(source), loop_graphs(target)
    difference = graph_difference(before, after)
    if difference:
        where = source.parent.relative_to(REPO_ROOT)
        return f"{where}'s loop graph is not {corpus.name}'s ({difference})"
    try:
        maps = [_label_map(a, b) for a, b in zip(before, after, strict=True)]
        return ResolvedPair(_translated(pair, maps), target, source)
    except ValueError as err:
        return f"labels do not carry over: {err}"

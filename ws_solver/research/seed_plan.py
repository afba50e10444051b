"""Triton's own partition scheduler (the seed, Triton PR #7312) run on a loop: its plan.

Since Triton 3.7, the ``tritongpu-partition-scheduling`` pass that ``add_warp_specialize``
runs first is PR #7312's data-flow-graph partitioner, the algorithm ws_solver's heuristic
ports. Triton 3.6's pass is an older one (loads and MMAs seed fixed partitions and their
users are propagated), so it is refused here: comparing with it would not compare the port
with its seed.

The pass is run in a child process with ``MLIR_ENABLE_DUMP=1``: the module printed before
the pass that follows the scheduler is the IR right after scheduling, with ``ttg.partition``
on every op of the loop, ``ttg.partition.outputs`` on region ops and the loop, and
``ttg.partition.stages`` on the loop. The scheduler does not move ops, but it clones view
ops (and data ops) that it places in several partitions, each clone just before its
original; `align` maps every op of the scheduled loop back to the op of the input loop it
copies, so the seed's partition sets are read onto the input's `LoopGraph`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

from ..core import readers
from ..heuristic.planner import with_resources
from ..ir import Module, Op, parse
from ..ir.annotate import OUTPUTS, PARTITION, STAGES, LoopAnnotation
from ..model.annotation import annotated_assignment
from ..model.dfg import build_graph, ws_loops
from ..model.graph import LoopGraph
from ..model.plan import Plan
from ..model.target import Target, target_for
from ..model.unspecialized import single_partition_plan
from ..triton.toolchain.versions import SEED_SCHEDULER_SINCE, has_seed_scheduler

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_DOT_ENV = "TRITON_PARTITION_SCHEDULING_ENABLE_DUMP_DOT"
_DOT_FILE = re.compile(r"graph-.*_(\d+)-(\d+)-merge-step\.dot")
_DOT_TITLE = re.compile(r'label = "merge: rule ([^"]+)";')

SEED_STRATEGY = "seed"
# add_warp_specialize's num_stages; the scheduler does not read it (TTGIR does not say it).
DEFAULT_STAGES = 3
SCHEDULER = "TritonGPUPartitionScheduling"
_DUMP_MARK = "// -----// IR Dump Before "
_CHILD_TIMEOUT_S = 300


class SeedUnavailable(RuntimeError):
    """Triton is not installed, or its partition scheduler is not the seed's."""


class SeedError(RuntimeError):
    """Triton's scheduler ran but its output could not be read back onto the input loop."""


def check_version(version: str) -> None:
    """Refuse a Triton whose partition scheduler is not PR #7312's (one line)."""
    try:
        seed = has_seed_scheduler(version)
    except ValueError as e:
        raise SeedUnavailable(f"cannot read Triton version {version!r}") from e
    if not seed:
        since = ".".join(map(str, SEED_SCHEDULER_SINCE))
        raise SeedUnavailable(
            f"Triton {version}'s partition scheduler is an older algorithm, not the seed's "
            f"(PR #7312, Triton {since}+); install Triton 3.9, e.g. pip install 'triton==3.9.0'"
        )


def installed_version() -> str:
    """The installed Triton's version, if its scheduler is the seed's; else SeedUnavailable."""
    try:
        import triton
    except ImportError as e:
        raise SeedUnavailable(
            "Triton is not installed: the seed's plan needs Triton 3.7+ (pip install "
            "'triton==3.9.0')"
        ) from e
    check_version(triton.__version__)
    return triton.__version__


# -- running the scheduler ----------------------------------------------------------------


@dataclass(frozen=True)
class Scheduled:
    """What one run of Triton's scheduler gave: the module right after it, and per
    warp-specialized loop (in the scheduler's order) the names of the merge rules it
    applied, in order (from its ``TRITON_PARTITION_SCHEDULING_ENABLE_DUMP_DOT`` graphs)."""

    text: str
    rules: dict[int, tuple[str, ...]]


def scheduled(ttgir: str, capability: int, num_stages: int = 3) -> Scheduled:
    """Run Triton's partition scheduler on `ttgir` (in a child process)."""
    installed_version()
    with tempfile.TemporaryDirectory(prefix="ws_seed_") as work:
        path = os.path.join(work, "input.ttgir")
        with open(path, "w") as f:
            f.write(ttgir)
        env = {**os.environ, "MLIR_ENABLE_DUMP": "1", _DOT_ENV: "1"}
        env.pop("MLIR_DUMP_PATH", None)  # the dumps must come on stderr
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        child = subprocess.run(
            [sys.executable, "-m", __name__, path, str(capability), str(num_stages)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=_CHILD_TIMEOUT_S,
            check=False,
        )
        rules = merge_rules(work)
    # Later passes of add_warp_specialize may fail (e.g. on sm_90 loops); the scheduler's
    # output is in the dump all the same.
    return Scheduled(after_scheduler(child.stderr, child.returncode), rules)


def scheduled_text(ttgir: str, capability: int, num_stages: int = 3) -> str:
    """The module right after Triton's partition scheduler ran on `ttgir`."""
    return scheduled(ttgir, capability, num_stages).text


def merge_rules(folder: str) -> dict[int, tuple[str, ...]]:
    """The merge rules the scheduler's dot graphs in `folder` name, per loop it analyzed
    (files ``graph-<function>_<loop>-<step>-merge-step.dot``, titled "merge: rule X")."""
    found: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir(folder):
        m = _DOT_FILE.fullmatch(name)
        if not m:
            continue
        text = readers.read_text(os.path.join(folder, name), readers.MAX_INPUT_BYTES)
        title = _DOT_TITLE.search(text or "")
        if title:
            found.setdefault(int(m.group(1)), []).append((int(m.group(2)), title.group(1)))
    return {loop: tuple(r for _, r in sorted(steps)) for loop, steps in sorted(found.items())}


def after_scheduler(dump: str, returncode: int = 0) -> str:
    """The module text of the dump that follows the scheduler's in `dump` (MLIR_ENABLE_DUMP
    output of add_warp_specialize)."""
    blocks = dump.split(_DUMP_MARK)[1:]
    for i, block in enumerate(blocks):
        if block.startswith(SCHEDULER) and i + 1 < len(blocks):
            text = blocks[i + 1].split("\n", 1)[1] if "\n" in blocks[i + 1] else ""
            return _module_only(text)
    tail = dump.strip().splitlines()[-1:] or ["no output"]
    raise SeedError(
        f"no IR dump after {SCHEDULER} in Triton's output (exit status {returncode}): {tail[0]}"
    )


def _module_only(text: str) -> str:
    """Cut what a failing later pass printed after the module (its diagnostics)."""
    lines = text.splitlines(keepends=True)
    out, seen_module = [], False
    for line in lines:
        if seen_module and not line.startswith("#loc") and line.strip():
            break
        out.append(line)
        if line.startswith("} loc(") or line.rstrip() == "}":
            seen_module = True
    return "".join(out)


# -- reading the scheduled loop back onto the input loop -------------------------------------


@dataclass(frozen=True)
class SeedLoop:
    """Triton's partition sets for one loop, on the input loop's ops (`LoopAnnotation`), and
    how many ops the scheduler cloned."""

    annotation: LoopAnnotation
    clones: int
    rules: tuple[str, ...] = ()  # the merge rules the scheduler applied, in order


def seed_loops(original: Module, scheduled: Module) -> list[SeedLoop]:
    """Per warp-specialized loop of `original`, the seed's partitions read from `scheduled`."""
    before, after = ws_loops(original), ws_loops(scheduled)
    if len(before) != len(after):
        raise SeedError(
            f"Triton's scheduler output has {len(after)} warp-specialized loops, "
            f"the input {len(before)}"
        )
    return [
        _seed_loop(_keyed(original, b.op), _keyed(scheduled, a.op), b.op.line, a.op)
        for b, a in zip(before, after, strict=True)
    ]


def _keyed(module: Module, loop: Op) -> list[tuple[tuple, Op]]:
    """The ops nested in `loop`, each with what identifies it across a clone (name, result
    types, source location)."""
    return [
        ((op.name, tuple(r.type.text for r in op.results), module.source_location(op)), op)
        for op in list(loop.walk())[1:]
    ]


def _seed_loop(
    original: list[tuple[tuple, Op]], scheduled: list[tuple[tuple, Op]], line: int, loop: Op
) -> SeedLoop:
    copies = align(original, scheduled, line)
    parts: list[tuple[int, ...]] = []
    outputs: dict[int, tuple[tuple[int, ...], ...]] = {}
    for index, group in enumerate(copies):
        union: set[int] = set()
        for op in group:
            union |= set(_ids(op.attr(PARTITION)))
        parts.append(tuple(sorted(union)))
        per_result = _outputs(group)
        if per_result is not None:
            outputs[index] = per_result
    stages = loop.attr(STAGES) or []
    loop_outputs = loop.attr(OUTPUTS) or []
    return SeedLoop(
        LoopAnnotation(
            op_partitions=tuple(parts),
            op_outputs=outputs,
            loop_partitions=_ids(loop.attr(PARTITION)),
            loop_outputs=tuple(_ids(p) for p in loop_outputs),
            stages=tuple(int(s) for s in stages),
            tag=0,
        ),
        clones=sum(len(g) - 1 for g in copies),
    )


def _ids(value) -> tuple[int, ...]:
    return tuple(sorted(value)) if isinstance(value, tuple) else ()


def _outputs(group: list[Op]) -> tuple[tuple[int, ...], ...] | None:
    """Per-result partition sets of a region op (union over its copies), if annotated."""
    found = [op.attr(OUTPUTS) for op in group if op.attr(OUTPUTS) is not None]
    if not found:
        return None
    width = max(len(f) for f in found)
    return tuple(
        tuple(sorted({p for f in found if k < len(f) for p in _ids(f[k])})) for k in range(width)
    )


def align(
    original: list[tuple[tuple, Op]], scheduled: list[tuple[tuple, Op]], line: int
) -> list[list[Op]]:
    """For each op of the input loop, its copies in the scheduled loop: the op itself and
    the clones the scheduler put just before it (same key: name, result types, location).
    Ops are given with their keys (`_keyed`)."""
    copies: list[list[Op]] = []
    j = 0
    for i, (key, op) in enumerate(original):
        group: list[Op] = []
        spare = (len(scheduled) - j) - (len(original) - i)
        while spare > 0 and j + 1 < len(scheduled) and scheduled[j][0] == key:
            if scheduled[j + 1][0] != key:
                break
            group.append(scheduled[j][1])
            j += 1
            spare -= 1
        if j >= len(scheduled) or scheduled[j][0] != key:
            found = f"'{scheduled[j][1].name}'" if j < len(scheduled) else "the end of the loop"
            raise SeedError(
                f"loop at line {line}: op {i} ('{op.name}' at line {op.line}) has no "
                f"counterpart in Triton's scheduled loop (found {found})"
            )
        group.append(scheduled[j][1])
        j += 1
        copies.append(group)
    if j != len(scheduled):
        raise SeedError(
            f"loop at line {line}: Triton's scheduled loop has {len(scheduled) - j} ops "
            "more than the input that are not clones"
        )
    return copies


# -- the seed's plan ----------------------------------------------------------------------


def seed_plan(graph: LoopGraph, target: Target, loop: SeedLoop) -> Plan:
    """The seed's partitioning of `graph` as a ws_solver plan. Warps, registers, stages and
    channel depths are the heuristic's rules applied to it (Triton decides those in later
    passes), so that ws_solver's cost model can price it. A loop the seed left unannotated,
    or put in one partition, is not specialized."""
    assignment = annotated_assignment(graph, loop.annotation)
    ids = sorted({p for parts in assignment for p in parts})
    if len(ids) <= 1:
        return single_partition_plan(graph, target, strategy=SEED_STRATEGY)
    # ws_solver's plans have no empty partition: the seed's ids, in order, without gaps.
    new = {p: i for i, p in enumerate(ids)}
    compact = tuple(tuple(new[p] for p in parts) for parts in assignment)
    return with_resources(graph, target, compact, SEED_STRATEGY)


def seed_plans(
    ttgir: str, target: Target | None = None, num_stages: int = DEFAULT_STAGES
) -> list[tuple[LoopGraph, Plan, SeedLoop]]:
    """Per warp-specialized loop of a TTGIR module: its graph, the seed's plan and what was
    read from Triton. The target is the module's unless given; Triton's scheduler is run
    for the module's own `ttg.target`."""
    module = parse(ttgir)
    graphs = [build_graph(module, loop) for loop in ws_loops(module)]
    if not graphs:
        return []
    capability = int(graphs[0].target.rsplit(":", 1)[-1])
    run = scheduled(ttgir, capability, num_stages)
    loops = seed_loops(module, parse(run.text))
    out = []
    for graph, loop in zip(graphs, loops, strict=True):
        loop = replace(loop, rules=run.rules.get(graph.loop_index, ()))
        t = target or target_for(graph.target)
        out.append((graph, seed_plan(graph, t, loop), loop))
    return out


def _child(path: str, capability: int, num_stages: int) -> None:
    """Run add_warp_specialize on the module in `path` (dumps go to stderr)."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend

    from ..triton.toolchain.make_ttgir import run_warp_specialize_only

    context = ir.context()
    ir.load_dialects(context)
    CUDABackend(GPUTarget("cuda", capability, 32)).load_dialects(context)
    mod = ir.parse_mlir_module(path, context)
    mod.context = context
    run_warp_specialize_only(mod, num_stages)


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

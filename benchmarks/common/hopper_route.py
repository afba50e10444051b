"""Triton 3.6.0's own sm_90 warp-specialization route (``add_hopper_warpspec``), driven from
outside: a probe of what that route lets a partitioner decide (docs/hopper-route.md).

Triton's sm_90 ``make_ttgir`` runs ``add_hopper_warpspec(num_stages)`` right after
``combine_tensor_select_and_if`` and before ``assign_latencies``/``schedule_loops``/``pipeline``.
A variant here replaces the ``ttgir`` stage with the same pass list, split at that pass:

- ``consumers``: write ``async_task_id`` on the anchor ops first (Triton's task partition
  then keeps them): the loads that feed a wgmma get the producer task 0, every wgmma and
  every store the consumer tasks ``1..K``. A wgmma with K > 1 task ids is what makes the
  route split the tile into K consumer warp groups (its data partition).
- ``plan``: take the anchors' sides from ws_solver's heuristic plan (forced to specialize)
  instead of the rule above.
- ``buffers``: the ``num_stages`` argument of ``add_hopper_warpspec``, which is the buffer
  count of the channels it creates (the later passes still get the config's ``num_stages``).
- ``warps``: the ``num_warps`` the module is converted with. The route only specializes a
  4-warp module; its warps then are 4 × (1 + consumer groups), which the launch takes from
  the module (``ttg.total-num-warps``).

Variant names: ``hopper`` (no suffix: Triton's own route, the same passes as a plain
``triton.compile``), then ``~cK``, ``~plan``, ``~bN``, ``~wW`` in that order, e.g.
``hopper~c2~w4``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

PREFIX = "hopper"
SEP = "~"
LOADS = frozenset({"tt.descriptor_load", "tt.load"})
DOTS = frozenset({"ttng.warp_group_dot"})
STORES = frozenset({"tt.descriptor_store", "tt.store", "tt.atomic_rmw", "tt.descriptor_reduce"})
# Ops a load's value passes through on its way to a wgmma operand.
_VIEWS = frozenset({"ttg.local_alloc", "ttg.memdesc_trans", "ttg.convert_layout", "tt.trans"})
TASK_ID = "async_task_id"


class RouteFailed(RuntimeError):
    """A Hopper-route compile failed; the message names the MLIR error and the pass."""


@dataclass(frozen=True)
class HopperVariant:
    consumers: int | None = None  # None: Triton chooses the anchors and the consumer groups
    plan: bool = False
    buffers: int | None = None  # None: the config's num_stages
    warps: int | None = None  # None: the config's num_warps

    @property
    def name(self) -> str:
        knobs = [f"c{self.consumers}"] if self.consumers else []
        knobs += ["plan"] if self.plan else []
        knobs += [f"b{self.buffers}"] if self.buffers else []
        knobs += [f"w{self.warps}"] if self.warps else []
        return SEP.join([PREFIX, *knobs])


def parse(name: str) -> HopperVariant | None:
    """The Hopper-route variant a strategy name stands for; None for any other name."""
    head, *knobs = name.split(SEP)
    if head != PREFIX:
        return None
    fields: dict[str, Any] = {}
    for knob in knobs:
        number = knob[1:]
        if knob == "plan":
            fields["plan"] = True
        elif knob[:1] in "cbw" and number.isdigit() and int(number) > 0:
            fields[{"c": "consumers", "b": "buffers", "w": "warps"}[knob[0]]] = int(number)
        else:
            return None
    variant = HopperVariant(**fields)
    if variant.plan and not variant.consumers:
        return None
    return variant if variant.name == name else None


# -- anchors -------------------------------------------------------------------------------
def _task_ids(ids: list[int]) -> str:
    return f"array<i32: {', '.join(map(str, ids))}>"


def _feeds_dot(value: Any, seen: set[int] | None = None) -> bool:
    """Whether `value` reaches operand A or B of a wgmma through views and smem copies."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return False
    seen.add(id(value))
    for use in value.uses:
        if use.op.name in DOTS and use.operand_index < 2:
            return True
        if use.op.name in _VIEWS and any(_feeds_dot(r, seen) for r in use.op.results):
            return True
    return False


def _in_ws_loop(op: Any) -> bool:
    return any(a.has_attr("tt.warp_specialize") for a in op.ancestors())


def anchor_sides(module: Any) -> dict[int, str]:
    """id(op) -> "producer" | "consumer" for the anchor ops, by Triton's own rule: loads in
    a specialized loop that feed a wgmma produce; wgmmas and stores consume."""
    sides: dict[int, str] = {}
    for op in module.walk():
        if op.name in LOADS and _in_ws_loop(op) and any(_feeds_dot(r) for r in op.results):
            sides[id(op)] = "producer"
        elif op.name in DOTS or op.name in STORES:
            sides[id(op)] = "consumer"
    return sides


def plan_sides(module: Any, text: str) -> dict[int, str]:
    """The anchors' sides from ws_solver's heuristic plan: an anchor in a loop goes where the
    plan put it (the partition holding a wgmma consumes, any other produces); anchors
    outside the planned loops keep the rule's side."""
    from ws_solver import ir
    from ws_solver.pipeline.partition import SolveOptions, partition_text

    annotated, reports = partition_text(text, "heuristic", options=SolveOptions(force=True))
    if not any(r.specialized for r in reports):
        raise ValueError("ws_solver's heuristic does not specialize any loop of this kernel")
    planned = ir.parse(annotated)
    ops, planned_ops = list(module.walk()), list(planned.walk())
    if [o.name for o in ops] != [o.name for o in planned_ops]:
        raise ValueError("the planned module's ops do not line up with the input's")
    consumer_parts = {
        p for o in planned_ops if o.name in DOTS for p in (o.attr("ttg.partition") or ())
    }
    sides = anchor_sides(module)
    for op, twin in zip(ops, planned_ops, strict=True):
        parts = twin.attr("ttg.partition")
        if id(op) in sides and parts:
            sides[id(op)] = "consumer" if set(parts) & consumer_parts else "producer"
    return sides


def annotate(text: str, consumers: int, plan: bool = False) -> str:
    """Write `async_task_id` on the anchors: 0 for producers, 1..consumers for consumers."""
    from ws_solver import ir

    module = ir.parse(text)
    sides = plan_sides(module, text) if plan else anchor_sides(module)
    ids = {"producer": [0], "consumer": list(range(1, consumers + 1))}
    for op in module.walk():
        if id(op) in sides:
            op.set_attr(TASK_ID, _task_ids(ids[sides[id(op)]]))
    return module.print()


# -- the ttgir stage -----------------------------------------------------------------------
def _run(mod: Any, name: str, add: Callable[[Any, bool], None]) -> None:
    from triton._C.libtriton import ir

    pm = ir.pass_manager(mod.context)
    add(pm, pm.enable_debug())
    pm.run(mod, name)


def _add_before_warpspec(pm: Any, options: Any, capability: int) -> None:
    """make_ttgir's passes up to (not including) add_hopper_warpspec."""
    from triton._C.libtriton import passes

    from ws_solver.triton.toolchain import make_ttgir

    make_ttgir._add_head(pm, options, capability)
    passes.ttgpuir.add_fuse_nested_loops(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_triton_licm(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttgpuir.add_combine_tensor_select_and_if(pm)


def _add_after_warpspec(pm: Any, options: Any, capability: int, dump: bool) -> None:
    """make_ttgir's passes after add_hopper_warpspec."""
    from triton._C.libtriton import passes

    from ws_solver.triton.toolchain import make_ttgir

    passes.ttgpuir.add_assign_latencies(pm, options.num_stages)
    passes.ttgpuir.add_schedule_loops(pm)
    passes.ttgpuir.add_pipeline(pm, options.num_stages, dump)
    make_ttgir._add_tail(pm, capability)


def make_stage(
    options: Any, capability: int, variant: HopperVariant, sink: dict | None = None
) -> Callable[[Any, dict], Any]:
    """The ttgir stage of `variant`; `sink` (if given) gets the module text before and right
    after add_hopper_warpspec."""
    from triton._C.libtriton import ir, nvidia

    from ws_solver.triton.toolchain.make_ttgir import parse_module_text

    if capability // 10 != 9:
        raise ValueError(f"the Hopper route is Triton's sm_90 path, not sm_{capability}")
    opts = dataclasses.replace(options, num_warps=variant.warps) if variant.warps else options
    buffers = variant.buffers or opts.num_stages

    def stage(mod: Any, metadata: dict) -> Any:
        from ws_solver.triton.dropin.captured import captured_stderr
        from ws_solver.triton.toolchain.reasons import failure_reason

        failure = None
        with captured_stderr() as err:
            try:
                mod = lower(mod)
            except Exception as e:  # summarised below, once the diagnostics are collected
                failure = e
        if failure is not None:
            raise RouteFailed(failure_reason(failure, err.text)) from None
        err.replay()
        metadata["tensordesc_meta"] = mod.get_tensordesc_metadata()
        return mod

    def lower(mod: Any) -> Any:
        context = mod.context
        if opts.maxnreg is not None:
            mod.set_attr("ttg.maxnreg", ir.builder(context).get_int32_attr(opts.maxnreg))
        _run(mod, "hopper_route_head", lambda pm, _: _add_before_warpspec(pm, opts, capability))
        text = mod.str()
        if sink is not None:
            sink["before"] = text
        if variant.consumers:
            mod = parse_module_text(annotate(text, variant.consumers, variant.plan), context)
        _run(
            mod,
            "hopper_warpspec",
            lambda pm, dump: nvidia.passes.hopper.add_hopper_warpspec(pm, buffers, dump),
        )
        if sink is not None:
            sink["after"] = mod.str()
        _run(
            mod,
            "hopper_route_tail",
            lambda pm, dump: _add_after_warpspec(pm, opts, capability, dump),
        )
        return mod

    return stage


def install(variant: HopperVariant) -> Callable[..., Any]:
    """A stages hook that compiles sm_90 kernels through `variant`."""
    from ws_solver.triton.toolchain.versions import stages_hook

    def hook(backend: Any, stages: dict, options: Any, language: Any, capability: int) -> None:
        if capability // 10 == 9 and "ttgir" in stages:
            stages["ttgir"] = make_stage(options, capability, variant)

    return stages_hook(hook, f"ws_solver-hopper-route-{variant}")


# -- what the route built --------------------------------------------------------------------
_REGION = re.compile(r"^\s*(default|partition\d+)\b", re.MULTILINE)
_TASKS = re.compile(r"async_task_id = array<i32: ([\d, ]*)>")
# A channel's buffer: a 3-d shared-memory allocation, slots x tile.
_BUFFER = re.compile(r"ttg\.local_alloc\s*:\s*\(\)\s*->\s*!ttg\.memdesc<(\d+)x\d+x\d+x")


def summary(after_warpspec: str) -> dict:
    """What add_hopper_warpspec made of a module: warp_specialize ops, task ids in use, the
    depth of the multi-buffered channels, and how many ops each task runs."""
    tasks: dict[str, int] = {}
    for ids in _TASKS.findall(after_warpspec):
        for t in ids.replace(" ", "").split(","):
            tasks[t] = tasks.get(t, 0) + 1
    return {
        "warp_specialize_ops": after_warpspec.count("ttg.warp_specialize("),
        "regions": len(_REGION.findall(after_warpspec)),
        "ops_per_task": dict(sorted(tasks.items())),
        "buffer_depths": sorted({int(d) for d in _BUFFER.findall(after_warpspec)}),
    }


def region_ops(after_warpspec: str, names: Iterator[str] | None = None) -> dict[str, list[str]]:
    """The anchor ops (loads, wgmmas, stores) of each region of the first warp_specialize."""
    wanted = set(names or (LOADS | DOTS | STORES | {"ttng.async_tma_copy_global_to_local"}))
    out: dict[str, list[str]] = {}
    region = None
    for line in after_warpspec.splitlines():
        m = _REGION.match(line)
        if m:
            region = m.group(1)
            out[region] = []
            continue
        if region is None:
            continue
        for name in wanted:
            if re.search(rf"(^|\s|=\s){re.escape(name)}\b", line):
                out[region].append(name)
    return out

"""Checking a plan: every hard limit it breaks, in words (the limits the CP-SAT model
enforces)."""

from __future__ import annotations

from .channels import required_channels
from .cost_table import cost_table
from .graph import LoopGraph
from .lowering import lowering_violations
from .plan import CHANNEL_DEPTHS, Plan, complete_assignment
from .resources import padded_warps, registers_needed, shared_and_tensor_memory
from .target import Target


def check_plan(plan: Plan, graph: LoopGraph, target: Target) -> list[str]:
    """Every constraint the plan breaks, in words; empty when the plan is valid."""
    if len(plan.assignment) != len(graph.nodes):
        return [f"assignment covers {len(plan.assignment)} nodes, the loop has {len(graph.nodes)}"]
    table = cost_table(graph, target)
    out: list[str] = []
    ids = [p.id for p in plan.partitions]
    if ids != list(range(len(ids))) or not ids:
        out.append(f"partition ids must be 0..{len(ids) - 1} in order, got {ids}")
        return out
    if len(ids) > target.max_partitions:
        out.append(f"{len(ids)} partitions exceed the limit of {target.max_partitions}")
    part = {p.id: p for p in plan.partitions}

    def label(n: int) -> str:
        if not 0 <= n < len(graph.nodes):
            return f"node {n}"
        return f"node {n} ({graph.nodes[n].op_name} {graph.nodes[n].label})"

    out += lowering_violations(graph, plan, table.lowering)
    for n in table.assignable:
        parts = plan.assignment[n]
        if not parts:
            out.append(f"{label(n)} is in no partition")
        elif len(parts) > 1 and n not in table.duplicable:
            out.append(f"{label(n)} is in partitions {list(parts)} but cannot be duplicated")
        if any(p not in part for p in parts):
            out.append(f"{label(n)} names unknown partitions {list(parts)}")
        for p in parts:
            if p in part and part[p].warps < table.nodes[n].min_warps:
                out.append(
                    f"{label(n)} needs {table.nodes[n].min_warps} warps, "
                    f"partition {p} has {part[p].warps}"
                )
    decided = {n: plan.assignment[n] for n in table.assignable}
    completed = complete_assignment(graph, decided)
    for n, (have, want) in enumerate(zip(plan.assignment, completed, strict=True)):
        if have != want and n not in table.assignable:
            out.append(f"{label(n)} must run in {list(want)} (its region's), not {list(have)}")
    for p in plan.partitions:
        members = plan.nodes_in(p.id)
        if not any(n in table.assignable for n in members):
            out.append(f"partition {p.id} is empty")
        if p.warps not in table.warp_options:
            out.append(f"partition {p.id}: {p.warps} warps is not one of {table.warp_options}")
            continue
        if p.registers not in target.setmaxnreg_values():
            out.append(f"partition {p.id}: {p.registers} is not a legal setmaxnreg value")
        need = registers_needed(table, members, p.warps)
        # Without specialization there is no setmaxnreg: the compiler allocates (or spills).
        if need > p.registers and plan.specialized:
            out.append(f"partition {p.id} needs {need} registers per thread, has {p.registers}")
        if p.stage not in (0, 1):
            out.append(f"partition {p.id}: stage {p.stage} is not 0 or 1")
    if plan.partitions[0].warps != graph.num_warps:
        out.append(
            f"partition 0 runs in the default region with the kernel's {graph.num_warps} "
            f"warps, not {plan.partitions[0].warps}"
        )
    warps = sum(padded_warps(target, p.warps) for p in plan.partitions)
    if warps > target.max_warps_per_cta:
        out.append(f"{warps} warps (padded to warp groups) exceed {target.max_warps_per_cta}")
    regs = sum(
        target.threads_per_warp * padded_warps(target, p.warps) * p.registers
        for p in plan.partitions
    )
    budget = target.register_budget(min(warps, target.max_warps_per_cta))
    if regs > budget and plan.specialized:
        out.append(
            f"{regs} registers exceed the {budget} Triton shares out at {warps} warps "
            f"(register file {target.registers_per_sm})"
        )
    want = {(u, v, q) for u, v, _, q in required_channels(graph, plan.assignment, table)}
    have = [(c.producer, c.value, c.dst) for c in plan.channels]
    for u, v, q in sorted(want - set(have)):
        out.append(f"{v} of {label(u)} is needed in partition {q} but has no channel there")
    for u, v, q in sorted(set(have) - want):
        out.append(f"channel of {v} from {label(u)} to partition {q} is not needed")
    if len(set(have)) != len(have):
        out.append("a value has two channels into one partition")
    for c in plan.channels:
        if c.depth not in CHANNEL_DEPTHS:
            out.append(
                f"channel of {c.value} from {label(c.producer)}: depth {c.depth} "
                f"not in {CHANNEL_DEPTHS}"
            )
        vc = table.values.get((c.producer, c.value))
        if vc is not None and (c.bytes, c.memory) != (vc.bytes, vc.memory):
            out.append(
                f"channel of {c.value} from {label(c.producer)} carries {c.bytes} B of "
                f"{c.memory or 'no'} memory, not {vc.bytes} B of {vc.memory or 'no'} memory"
            )
        if 0 <= c.producer < len(plan.assignment) and c.src not in plan.assignment[c.producer]:
            out.append(
                f"channel of {c.value} from {label(c.producer)} is sent from partition "
                f"{c.src}, which does not run it"
            )
    smem, tmem = shared_and_tensor_memory(plan, table)
    if smem > target.shared_memory_per_cta:
        out.append(f"{smem} B of shared memory exceed {target.shared_memory_per_cta} B")
    if tmem > target.tmem_columns:
        out.append(f"{tmem} tensor-memory columns exceed {target.tmem_columns}")
    barriers = sum(2 * c.depth for c in plan.channels)
    if barriers > target.max_mbarriers:
        out.append(f"{barriers} mbarriers exceed {target.max_mbarriers}")
    return out

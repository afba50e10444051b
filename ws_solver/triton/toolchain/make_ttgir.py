"""Triton's NVIDIA ``make_ttgir`` split at the partitioner input point (3.6.0 and 3.9.0).

The pass lists mirror ``triton/backends/nvidia/compiler.py::make_ttgir`` of each supported
version; where they differ, ``versions.py`` says how (one flag per difference). A new
version needs its row there, checked against its ``make_ttgir``. Not run by the split: 3.9's
``fpsan`` instrumentation (a debugging mode).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from . import versions

PartitionFn = Callable[[str], str]
TextRewrite = Callable[[str], str]
TtgirStage = Callable[[Any, dict], Any]


def _check_capability(capability: int) -> None:
    """Reject targets this split does not model."""
    if capability // 10 < 9:
        raise ValueError(f"warp-specialization pipeline needs sm_90 or newer, got sm_{capability}")


def _add_head(pm: Any, options: Any, capability: int) -> None:
    """Add the passes make_ttgir runs before its per-architecture branch."""
    from triton._C.libtriton import nvidia, passes

    version = versions.installed()
    emu_tf32 = capability // 10 >= 8
    passes.ttir.add_convert_to_ttgpuir(
        pm, f"cuda:{capability}", options.num_warps, 32, options.num_ctas
    )
    if version.clc and getattr(options, "clc", False):
        nvidia.passes.ttnvgpuir.add_to_clc(pm)
    passes.ttgpuir.add_coalesce(pm)
    passes.ttgpuir.add_f32_dot_tc(pm, emu_tf32)
    if version.cga_layouts:
        nvidia.passes.ttnvgpuir.add_assign_cga_layouts(pm)
        passes.ttgpuir.add_remove_layout_conversions(pm)
        nvidia.passes.ttnvgpuir.add_optimize_cta_locality(pm)
    else:
        nvidia.passes.ttnvgpuir.add_plan_cta(pm)
    passes.ttgpuir.add_remove_layout_conversions(pm)
    passes.ttgpuir.add_optimize_thread_locality(pm)
    passes.ttgpuir.add_accelerate_matmul(pm)
    if version.cga_layouts:
        nvidia.passes.ttnvgpuir.add_check_matmul_two_cta(pm)
    passes.ttgpuir.add_remove_layout_conversions(pm)
    passes.ttgpuir.add_optimize_dot_operands(pm, capability >= 80)
    nvidia.passes.ttnvgpuir.add_optimize_descriptor_encoding(pm)
    passes.ttir.add_loop_aware_cse(pm)


def _add_loop_prefix(pm: Any, options: Any, capability: int) -> None:
    """Add the per-architecture loop passes up to and including schedule_loops."""
    from triton._C.libtriton import nvidia, passes

    passes.ttgpuir.add_fuse_nested_loops(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_triton_licm(pm)
    if capability // 10 == 9:
        # Triton's own Hopper route would run add_hopper_warpspec here; we partition instead.
        passes.common.add_canonicalizer(pm)
        passes.ttgpuir.add_combine_tensor_select_and_if(pm)
    else:
        passes.ttgpuir.add_optimize_accumulator_init(pm)
        passes.ttgpuir.add_hoist_tmem_alloc(pm, False)
        nvidia.passes.ttnvgpuir.add_promote_lhs_to_tmem(pm)
    passes.ttgpuir.add_assign_latencies(pm, options.num_stages)
    passes.ttgpuir.add_schedule_loops(pm)


def _add_loop_suffix(pm: Any, options: Any, capability: int, dump_enabled: bool) -> None:
    """Add warp specialization and the loop passes that follow it."""
    _add_specialize_and_pipeline(pm, options, dump_enabled)
    _add_after_pipeline(pm, capability)


def _add_specialize_and_pipeline(pm: Any, options: Any, dump_enabled: bool) -> None:
    """Add warp specialization, software pipelining and Triton's partition-warps pass."""
    for _, add in _specialize_steps(options, dump_enabled):
        add(pm)


def _specialize_steps(options: Any, dump_enabled: bool) -> list[tuple[str, Callable]]:
    """The passes of ``_add_specialize_and_pipeline``, named, in order."""
    from triton._C.libtriton import passes

    return [
        ("warp_specialize", lambda pm: passes.ttgpuir.add_warp_specialize(pm, options.num_stages)),
        (
            "pipeline",
            lambda pm: passes.ttgpuir.add_pipeline(pm, options.num_stages, dump_enabled),
        ),
        ("optimize_partition_warps", passes.ttgpuir.add_optimize_partition_warps),
    ]


def _add_after_pipeline(pm: Any, capability: int) -> None:
    """Add the per-architecture loop passes that follow optimize_partition_warps."""
    from triton._C.libtriton import nvidia, passes

    if capability // 10 >= 10:
        passes.ttgpuir.add_combine_tensor_select_and_if(pm)
        passes.ttgpuir.add_hoist_tmem_alloc(pm, True)
        nvidia.passes.ttnvgpuir.add_remove_tmem_tokens(pm)


def _add_tail(pm: Any, capability: int) -> None:
    """Add the passes make_ttgir runs after its per-architecture branch."""
    from triton._C.libtriton import nvidia, passes

    version = versions.installed()
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_loop_aware_cse(pm)
    if version.prefetch:
        passes.ttgpuir.add_prefetch(pm)
    passes.ttgpuir.add_optimize_dot_operands(pm, capability >= 80)
    passes.ttgpuir.add_coalesce_async_copy(pm)
    nvidia.passes.ttnvgpuir.add_optimize_tmem_layouts(pm)
    if version.tmem_load_reduce:
        nvidia.passes.ttnvgpuir.add_tmem_load_reduce(pm)
    if capability // 10 >= 9:
        nvidia.passes.ttnvgpuir.add_tma_lowering(pm)
    if version.lower_clc and capability // 10 >= 10:
        nvidia.passes.ttnvgpuir.add_lower_clc(pm)
    passes.ttgpuir.add_remove_layout_conversions(pm)
    nvidia.passes.ttnvgpuir.add_interleave_tmem(pm)
    passes.ttgpuir.add_reduce_data_duplication(pm)
    passes.ttgpuir.add_reorder_instructions(pm)
    passes.ttir.add_loop_aware_cse(pm)
    passes.common.add_symbol_dce(pm)
    nvidia.passes.ttnvgpuir.add_fence_insertion(pm, capability)
    nvidia.passes.ttnvgpuir.add_lower_mma(pm)
    if version.hoist_mbarrier_lifecycle:
        nvidia.passes.ttnvgpuir.add_hoist_mbarrier_lifecycle(pm, capability)
    passes.common.add_sccp(pm)
    passes.common.add_cse(pm)
    passes.common.add_canonicalizer(pm)


def run_until_partition(mod: Any, options: Any, capability: int) -> Any:
    """Lower TTIR to TTGIR up to and including schedule_loops (the partitioner input point)."""
    from triton._C.libtriton import ir

    _check_capability(capability)
    if options.maxnreg is not None:
        mod.set_attr("ttg.maxnreg", ir.builder(mod.context).get_int32_attr(options.maxnreg))
    pm = ir.pass_manager(mod.context)
    pm.enable_debug()
    _add_head(pm, options, capability)
    _add_loop_prefix(pm, options, capability)
    pm.run(mod, "make_ttgir_until_partition")
    return mod


def run_after_partition(
    mod: Any,
    options: Any,
    capability: int,
    metadata: dict | None = None,
    post_pipeline: TextRewrite | None = None,
    progress: Callable[[str], None] | None = None,
) -> Any:
    """Run warp specialization and the rest of make_ttgir on a (partitioned) module.

    With ``post_pipeline``, the pass list is split after ``pipeline`` and
    ``optimize_partition_warps``: the module is printed, ``post_pipeline(text)`` rewrites
    it, the result is parsed (and verified) and the remaining passes run on the new module.
    Use the returned module: with ``post_pipeline`` it is not ``mod``. A ``post_pipeline``
    whose ``located`` is true after the call returned text with every op located
    (``parse_module_text``).

    With ``progress``, ``warp_specialize``, ``pipeline`` and ``optimize_partition_warps``
    run one pass manager each, and ``progress(step)`` is called before each step
    ("warp_specialize", "pipeline", "optimize_partition_warps", "rewrite", "tail"), so that
    a watcher can tell where a lowering stopped (see guard.py).
    """
    from triton._C.libtriton import ir

    _check_capability(capability)
    if post_pipeline is None and progress is None:
        pm = ir.pass_manager(mod.context)
        dump_enabled = pm.enable_debug()
        _add_loop_suffix(pm, options, capability, dump_enabled)
        _add_tail(pm, capability)
        pm.run(mod, "make_ttgir_after_partition")
    else:
        context = mod.context
        if progress is None:
            pm = ir.pass_manager(context)
            dump_enabled = pm.enable_debug()
            _add_specialize_and_pipeline(pm, options, dump_enabled)
            pm.run(mod, "make_ttgir_specialize_and_pipeline")
        else:
            for step in range(len(_specialize_steps(options, False))):
                pm = ir.pass_manager(context)
                dump_enabled = pm.enable_debug()
                name, add = _specialize_steps(options, dump_enabled)[step]
                progress(name)
                add(pm)
                pm.run(mod, f"make_ttgir_{name}")
        if post_pipeline is not None:
            if progress is not None:
                progress("rewrite")
            text = post_pipeline(mod.str())
            mod = parse_module_text(text, context, getattr(post_pipeline, "located", False))
        if progress is not None:
            progress("tail")
        pm = ir.pass_manager(context)
        pm.enable_debug()
        _add_after_pipeline(pm, capability)
        _add_tail(pm, capability)
        pm.run(mod, "make_ttgir_after_pipeline")
    if metadata is not None:
        metadata["tensordesc_meta"] = mod.get_tensordesc_metadata()
    return mod


def run_warp_specialize_only(mod: Any, num_stages: int) -> Any:
    """Run only Triton's add_warp_specialize pass on a module."""
    from triton._C.libtriton import ir, passes

    pm = ir.pass_manager(mod.context)
    pm.enable_debug()
    passes.ttgpuir.add_warp_specialize(pm, num_stages)
    pm.run(mod, "warp_specialize_only")
    return mod


def parse_module_text(text: str, context: Any, located: bool = False) -> Any:
    """Parse (and verify) TTGIR text into a module bound to ``context``. Triton parses a
    file: the ops the rewrites added without a location first borrow one of the text's own
    (`ir.located_text`), so that the temporary file's path never shows in the kernel's
    TTGIR. ``located``: the caller knows `ir.located_text` leaves the text as it is (it
    read the text already), so it is not parsed for that again."""
    from triton._C.libtriton import ir

    fd, path = tempfile.mkstemp(suffix=".ttgir")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text if located else _located(text))
        mod = ir.parse_mlir_module(path, context)
    finally:
        os.unlink(path)
    # parse_mlir_module returns a module without .context; later stages read it.
    mod.context = context
    return mod


def _located(text: str) -> str:
    """`text` with a location on every op (`ir.located_text`), or as it is when ws_solver's
    reader does not take it (Triton's parser then reports what is wrong with it)."""
    from ... import ir as ws_ir

    try:
        return ws_ir.located_text(ws_ir.parse(text))
    except ws_ir.ParseError:
        return text


def make_ttgir_stage(
    partition_fn: PartitionFn,
    options: Any,
    capability: int,
    post_pipeline: TextRewrite | None = None,
) -> TtgirStage:
    """Build a ttgir stage that lets ``partition_fn`` rewrite the module text before WS
    (and ``post_pipeline``, if given, the text after pipelining; see run_after_partition)."""

    def stage(mod: Any, metadata: dict) -> Any:
        context = mod.context
        run_until_partition(mod, options, capability)
        new_mod = parse_module_text(partition_fn(mod.str()), context)
        return run_after_partition(new_mod, options, capability, metadata, post_pipeline)

    return stage

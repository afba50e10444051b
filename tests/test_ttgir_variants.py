"""benchmarks/gpu/ttgir_variants.py: argument checks and the TTGIR-file compile path (CPU)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.gpu import ttgir_variants

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no_such_kernel", "c", "dropin:none"], "unknown kernel"),
        (["gemm_tma", "t128x128x64_w4_s4", "/no/such.ttgir"], "no such variant file"),
        (["gemm_tma", "t128x128x64_w4_s4", "/no/such.ptx"], "no such variant file"),
        (["gemm_tma", "t128x128x64_w4_s4", "kernel.cubin"], "a .ttgir or .ptx file"),
        (["gemm_tma", "no_such_config", "dropin:none"], "has no config"),
        (["gemm_tma", "t128x128x64_w4_s4", "no_such_config=dropin:none"], "has no config"),
        (
            ["gemm_tma", "t128x128x64_w4_s4", "dropin:none", "--extra-configs", "/no/such.json"],
            "no such file",
        ),
    ],
)
def test_bad_arguments_fail_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ttgir_variants.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("dropin:none", ("base", "dropin:none")),
        ("other_1.x=dropin:triton", ("other_1.x", "dropin:triton")),
        ("x_cfg=edits/a.ttgir", ("x_cfg", "edits/a.ttgir")),
        ("edits/a=b.ttgir", ("base", "edits/a=b.ttgir")),  # a path, not a config name
    ],
)
def test_a_variant_may_name_its_config(variant, expected):
    assert ttgir_variants._split_variant(variant, "base") == expected


def test_extra_configs_are_found_by_name(tmp_path, capsys, monkeypatch):
    """A config from --extra-configs passes the name check (the run then needs a GPU)."""
    from benchmarks.common import bench_compile
    from corpus import kernels as corpus_kernels

    module = corpus_kernels.load("gemm_tma")
    monkeypatch.setattr(module, "CONFIGS", dict(module.CONFIGS))  # the merge is process-wide
    monkeypatch.setenv(bench_compile.EXTRA_CONFIGS_ENV, "")
    extra = tmp_path / "extra.json"
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}
    extra.write_text(json.dumps({"gemm_tma": {"x_small": config}}))
    argv = ["gemm_tma", "t128x128x64_w4_s4", "x_small=/no/such.ttgir", "--extra-configs"]
    with pytest.raises(SystemExit):
        ttgir_variants.main([*argv, str(extra)])
    assert "no such variant file" in capsys.readouterr().err


def _ops(ttgir: str) -> list[str]:
    """The op names of a TTGIR text in order (SSA names and locations differ between prints)."""
    pairs = re.findall(r"= ([a-z_]+\.[a-z_.]+)|^\s*([a-z_]+\.[a-z_.]+) ", ttgir, re.MULTILINE)
    return [result or effect for result, effect in pairs]


@pytest.mark.triton
def test_a_ttgir_file_replaces_the_ttgir_stage(tmp_path):
    """Lowering the drop-in's own final TTGIR from a file gives the same module back."""
    from corpus import kernels as corpus_kernels

    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x128x64_w4_s4"]
    normal = ttgir_variants._compile("gemm_tma", config, "dropin:none")
    path = tmp_path / "same.ttgir"
    path.write_text(normal.asm["ttgir"])
    from_file = ttgir_variants._compile("gemm_tma", config, str(path))
    ops = _ops(normal.asm["ttgir"])
    assert len(ops) > 20 and "ttng.warp_group_dot" in ops
    assert _ops(from_file.asm["ttgir"]) == ops
    assert from_file.metadata.shared == normal.metadata.shared
    assert from_file.metadata.tensordesc_meta == normal.metadata.tensordesc_meta


@pytest.mark.triton
def test_a_ptx_file_replaces_the_ptx_stage(tmp_path):
    """Assembling the drop-in's own PTX from a file gives the same kernel back."""
    from corpus import kernels as corpus_kernels

    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x128x64_w4_s4"]
    normal = ttgir_variants._compile("gemm_tma", config, "dropin:none")
    path = tmp_path / "same.ptx"
    path.write_text(normal.asm["ptx"].replace("// begin inline asm", "// edited"))
    from_file = ttgir_variants._compile("gemm_tma", config, str(path))
    assert "// edited" in from_file.asm["ptx"]
    assert from_file.asm["ptx"] == path.read_text()
    assert from_file.metadata.shared == normal.metadata.shared
    assert from_file.metadata.name == normal.metadata.name


@pytest.mark.triton
@pytest.mark.triton36
def test_a_file_can_replace_a_stage_of_a_specialized_compile(tmp_path):
    """--base-strategy: the PTX of a warp-specialized compile, assembled from a file, keeps
    that compile's metadata (12 warps, not the unspecialized 8)."""
    from corpus import kernels as corpus_kernels

    config = corpus_kernels.load("gemm_tma").CONFIGS["t128x256x64_w8_s3"]
    specialized = ttgir_variants._compile("gemm_tma", config, "dropin:triton")
    assert specialized.metadata.num_warps > config["num_warps"]
    path = tmp_path / "specialized.ptx"
    path.write_text(specialized.asm["ptx"])
    from_file = ttgir_variants._compile("gemm_tma", config, str(path), "triton")
    assert from_file.asm["ptx"] == specialized.asm["ptx"]
    assert from_file.metadata.num_warps == specialized.metadata.num_warps
    assert from_file.metadata.shared == specialized.metadata.shared

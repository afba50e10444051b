"""benchmarks/ttgir_variants.py: argument checks and the TTGIR-file compile path (CPU)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import ttgir_variants  # noqa: E402


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no_such_kernel", "c", "dropin:none"], "unknown kernel"),
        (["gemm_tma", "t128x128x64_w4_s4", "/no/such.ttgir"], "no such TTGIR file"),
        (["gemm_tma", "no_such_config", "dropin:none"], "has no config"),
    ],
)
def test_bad_arguments_fail_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ttgir_variants.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def _ops(ttgir: str) -> list[str]:
    """The op names of a TTGIR text in order (SSA names and locations differ between prints)."""
    pairs = re.findall(r"= ([a-z_]+\.[a-z_.]+)|^\s*([a-z_]+\.[a-z_.]+) ", ttgir, re.MULTILINE)
    return [result or effect for result, effect in pairs]


def test_a_ttgir_file_replaces_the_ttgir_stage(tmp_path):
    """Lowering the drop-in's own final TTGIR from a file gives the same module back."""
    pytest.importorskip("triton")
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

"""The compiled TTGIR keeps the user's locations: ops the drop-in's rewrites add without a
location borrow one of the text's own before Triton parses it (through a temporary file, whose
path MLIR would otherwise give them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ws_solver import ir

TEXT = """\
#loc = loc("kernel.py":3:0)
module {
  tt.func @f(%n: i32) {
    %c0 = arith.constant 0 : i32 loc(#loc1)
    %a = arith.addi %n, %c0 : i32
    scf.for %i = %c0 to %n step %c0  : i32 {
      %b = arith.muli %i, %i : i32
    } loc(#loc2)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("kernel.py":4:8)
#loc2 = loc("kernel.py":5:4)
"""


def test_an_op_without_a_location_borrows_its_neighbour_s_or_its_parent_s() -> None:
    located = ir.located_text(ir.parse(TEXT))
    assert "%a = arith.addi %n, %c0 : i32 loc(#loc1)\n" in located  # the op before it
    assert "%b = arith.muli %i, %i : i32 loc(#loc2)\n" in located  # the loop around it
    module = ir.parse(located)
    assert all(op.location for op in module.walk() if op.name != "module" or op.location)
    assert ir.located_text(module) == located  # nothing left to place
    assert located.replace(" loc(#loc1)\n    scf", "\n    scf", 1) != TEXT


def test_text_with_every_location_is_unchanged() -> None:
    corpus = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
    text = (corpus / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir").read_text()
    assert ir.located_text(ir.parse(text)) == text


@pytest.mark.triton
def test_the_compiled_ttgir_names_no_temporary_file() -> None:
    pytest.importorskip("triton")
    from triton_util import compile_corpus_config

    from corpus.kernels import gemm_tma

    config = gemm_tma.CONFIGS["t128x256x64_w8_s3"]
    text = compile_corpus_config("gemm_tma", config, "optimal", capability=90)
    files = set(re.findall(r'loc\("([^"]+)":\d+:\d+\)', text))
    assert any(f.endswith("gemm_tma.py") for f in files), files
    assert all(f.endswith(".py") for f in files), files  # sources, never a parsed .ttgir


def test_an_edited_module_is_located_as_its_print_would_be() -> None:
    """`located_text` of a module with attribute edits (the rewrite chain's, which then need
    not parse its print again) is that of its print, parsed; with text spliced in it refuses."""
    module = ir.parse(TEXT)
    for op in module.walk():
        if op.name in ("arith.addi", "scf.for", "arith.muli"):
            op.set_attr("ws.mark", "1 : i32")  # where the location goes after the dictionary
    located = ir.located_text(module)
    assert located == ir.located_text(ir.parse(module.print()))
    assert "%a = arith.addi %n, %c0 {ws.mark = 1 : i32} : i32 loc(#loc1)\n" in located
    corpus = Path(__file__).resolve().parent.parent / "corpus" / "ttgir"
    gemm = ir.parse((corpus / "gemm_tma.t128x128x64_w4_s4.sm90.ttgir").read_text())
    for op in list(gemm.walk())[::7]:
        if op._attr_syntax is not None and op.location:
            op.set_attr("ws.mark", None)
    assert ir.located_text(gemm) == gemm.print() != gemm.text
    module.insert_before(next(op for op in module.walk() if op.name == "tt.return"), "tt.x")
    with pytest.raises(ir.EditError):
        ir.located_text(module)

"""Text-level rewrites: insert_before/insert_after/erase/replace_operand/fresh_name."""

from __future__ import annotations

from pathlib import Path

import pytest

from ws_solver import ir

SAMPLE = (Path(__file__).parent / "data" / "ir_sample.sm90.ttgir").read_text()

SMALL = """\
module {
  tt.func @f(%arg0: i32, %arg1: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %0 = arith.addi %arg0, %c1_i32 : i32 loc(#loc1)
    %1 = scf.for %iv = %arg0 to %arg1 step %c1_i32 iter_args(%acc = %0) -> (i32)  : i32 {
      %2 = arith.muli %acc, %iv : i32
      scf.yield %2 : i32
    } {tt.warp_specialize}
    tt.return %1 : i32
  }
}
#loc1 = loc("k.py":3:4)
"""


def _op(module: ir.Module, name: str, nth: int = 0) -> ir.Op:
    return [op for op in module.walk() if op.name == name][nth]


def test_no_edits_print_is_identity():
    for text in (SMALL, SAMPLE):
        assert ir.parse(text).print() == text


def test_spans_cover_the_op_text():
    m = ir.parse(SMALL)
    add = _op(m, "arith.addi")
    start, end = add._span
    assert m.text[start:end] == "%0 = arith.addi %arg0, %c1_i32 : i32 loc(#loc1)"
    loop = _op(m, "scf.for")
    start, end = loop._span
    assert m.text[start:end].startswith("%1 = scf.for")
    assert m.text[start:end].endswith("} {tt.warp_specialize}")
    uses = [_use(add, i) for i in range(len(add.operands))]
    assert [m.text[slice(*m._use_span(u))] for u in uses] == ["%arg0", "%c1_i32"]
    for op in m.walk():
        for i, v in enumerate(op.operands):
            s, e = m._use_span(_use(op, i))
            assert m.text[s:e] == v.name


def _use(op, index: int):
    """The use that is operand `index` of `op`."""
    return next(u for u in op.operands[index].uses if u.op is op and u.operand_index == index)


def test_insert_before_and_after_keep_indentation():
    m = ir.parse(SMALL)
    mul = _op(m, "arith.muli")
    name = m.fresh_name("x")
    m.insert_before(mul, f"{name} = arith.addi %acc, %iv : i32")
    m.insert_after(mul, "%y_0 = arith.subi %2, %iv : i32\n%y_1 = arith.addi %y_0, %iv : i32")
    m.insert_after(_op(m, "scf.for"), "%z = arith.addi %1, %1 : i32")
    out = m.print()
    lines = out.splitlines()
    i = lines.index("      %x_0 = arith.addi %acc, %iv : i32")
    assert lines[i + 1].lstrip().startswith("%2 = arith.muli")
    assert lines[i + 2] == "      %y_0 = arith.subi %2, %iv : i32"
    assert lines[i + 3] == "      %y_1 = arith.addi %y_0, %iv : i32"
    assert (
        lines[lines.index("    } {tt.warp_specialize}") + 1] == "    %z = arith.addi %1, %1 : i32"
    )
    again = ir.parse(out)
    assert [op.name for op in _op(again, "scf.for").body.ops] == [
        "arith.addi",
        "arith.muli",
        "arith.subi",
        "arith.addi",
        "scf.yield",
    ]


def test_replace_operand_and_erase():
    m = ir.parse(SMALL)
    y = _op(m, "scf.yield")
    mul = _op(m, "arith.muli")
    m.insert_before(y, "%n = arith.addi %2, %2 : i32")
    m.replace_operand(y, 0, "%n")
    m.replace_operand(mul, 1, "%acc")
    out = m.print()
    assert "scf.yield %n : i32" in out
    assert "%2 = arith.muli %acc, %acc : i32" in out
    again = ir.parse(out)
    add = _op(again, "arith.addi", 1)
    m2 = ir.parse(out)
    m2.replace_operand(_op(m2, "scf.yield"), 0, "%2")
    m2.erase(_op(m2, "arith.addi", 1))
    assert add.results[0].uses
    back = m2.print()
    assert "%n = " not in back
    assert "scf.yield %2 : i32" in back
    ir.parse(back)


def test_erase_refuses_used_results_and_combines_with_inserts():
    m = ir.parse(SMALL)
    with pytest.raises(ir.EditError):
        m.erase(_op(m, "arith.muli"))
    y = _op(m, "scf.yield")
    m.insert_before(y, "%w = arith.addi %2, %iv : i32")
    m.insert_after(y, "// never printed: inside nothing")  # after the yield, still in the body
    m2 = ir.parse(SMALL)
    loop = _op(m2, "scf.for")
    ret = _op(m2, "tt.return")
    m2.replace_operand(ret, 0, "%0")
    m2.insert_before(loop, "%keep = arith.addi %0, %0 : i32")
    m2.erase(loop)
    out = m2.print()
    assert "scf.for" not in out and "arith.muli" not in out
    assert "    %keep = arith.addi %0, %0 : i32\n    tt.return %0 : i32" in out


def test_move_before_keeps_names_and_takes_new_text():
    m = ir.parse(SMALL)
    add, mul = _op(m, "arith.addi"), _op(m, "arith.muli")
    assert m.op_text(add) == "%0 = arith.addi %arg0, %c1_i32 : i32 loc(#loc1)"
    m.move_before(mul, _op(m, "scf.yield"), "%2 = arith.muli %iv, %acc : i32")
    m.move_before(add, _op(m, "scf.for"))
    out = m.print()
    assert "      %2 = arith.muli %iv, %acc : i32\n      scf.yield %2 : i32" in out
    assert out.count("arith.muli") == 1 and out.count("arith.addi") == 1
    with pytest.raises(ir.EditError):
        m.move_before(add, add)
    ir.parse(out)


def test_attribute_edits_and_splices_together():
    m = ir.parse(SMALL)
    loop = _op(m, "scf.for")
    loop.set_attr("ttg.partition", "array<i32: 0>")
    m.insert_after(_op(m, "scf.yield"), "")  # an empty insertion is a no-op
    m.replace_operand(_op(m, "scf.yield"), 0, "%acc")
    out = m.print()
    assert "} {tt.warp_specialize, ttg.partition = array<i32: 0>}" in out
    assert "scf.yield %acc : i32" in out


def test_fresh_name_avoids_existing_and_handed_out_names():
    m = ir.parse(SMALL)
    assert m.fresh_name("iv") == "%iv_0"
    assert m.fresh_name("iv") == "%iv_1"
    text = SMALL.replace("%acc = %0", "%acc_0 = %0").replace("%acc,", "%acc_0,")
    m = ir.parse(text)
    assert m.fresh_name("acc") == "%acc_1"
    with pytest.raises(ir.EditError):
        m.fresh_name("bad name")


def test_replace_operand_checks_arguments():
    m = ir.parse(SMALL)
    add = _op(m, "arith.addi")
    with pytest.raises(ir.EditError):
        m.replace_operand(add, 2, "%arg0")
    with pytest.raises(ir.EditError):
        m.replace_operand(add, 0, "arg0")


def test_overlapping_edits_are_refused():
    m = ir.parse(SMALL)
    add = _op(m, "arith.addi")
    m.replace_operand(add, 0, "%arg1")
    m.replace_operand(add, 0, "%arg0")
    with pytest.raises(ir.EditError):
        m.print()


def test_sample_rewrites_reparse():
    m = ir.parse(SAMPLE)
    for op in list(m.walk()):
        if op.name == "arith.constant" and op.results:
            name = m.fresh_name("copy")
            r = op.results[0]
            m.insert_after(op, f"{name} = arith.constant {_const_text(m, op)}")
            for use in r.uses:
                if use.op.parent is op.parent:
                    m.replace_operand(use.op, use.operand_index, name)
            break
    ir.parse(m.print())


def _const_text(m: ir.Module, op: ir.Op) -> str:
    start, end = op._span
    text = m.text[start:end]
    return text.split("arith.constant", 1)[1].strip()

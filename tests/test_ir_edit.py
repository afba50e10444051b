"""Attribute editing: placement per op format, minimal diffs, re-reading, Triton acceptance."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

import corpus
from ws_solver import ir
from ws_solver.ir.attributes import print_dictionary

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(corpus.ttgir_dir().glob("*.ttgir"))

# Printed by Triton 3.6 (parse → str) from a hand-written kernel: one op of each format.
SAMPLE = (Path(__file__).parent / "data" / "ir_sample.sm90.ttgir").read_text()

PART = ir.i32_array([0])


def _op(module: ir.Module, name: str, nth: int = 0) -> ir.Op:
    return [op for op in module.walk() if op.name == name][nth]


def _attrs(module: ir.Module) -> list[dict[str, str | None]]:
    return [{a.name: a.raw for a in op.attributes.values()} for op in module.walk()]


def _dictionary_line(op: ir.Op, text: str) -> int:
    """Line of the op's dictionary, or of where a new one goes (a loop's closing line)."""
    syntax = op._attr_syntax
    offset = syntax.span[0] if syntax.span else syntax.insert_at
    return text.count("\n", 0, offset) + 1


def _spelled(op: ir.Op, attrs: dict) -> str:
    keyword = "attributes " if op._attr_syntax.keyword else ""
    return keyword + print_dictionary(list(attrs.values())) if attrs else ""


def _check_minimal_diff(before: ir.Module, after: ir.Module) -> list[int]:
    """Only dictionaries changed: same lines, except that each line holding an edited op's
    dictionary differs exactly by that dictionary. Returns the changed line numbers."""
    old_lines = before.text.splitlines()
    new_text = after.print()
    new_lines = new_text.splitlines()
    assert len(new_lines) == len(old_lines)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    changed = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "replace"), (tag, old_lines[i1:i2], new_lines[j1:j2])
        assert (i1, i2) == (j1, j2)
        if tag == "replace":
            changed.extend(range(i1 + 1, i2 + 1))
    edited: dict[int, tuple[ir.Op, ir.Op]] = {}
    for old_op, new_op in zip(before.walk(), after.walk(), strict=True):
        if old_op.attributes != new_op.attributes:
            line = _dictionary_line(old_op, before.text)
            assert line not in edited, "two edited dictionaries on one line"
            edited[line] = (old_op, new_op)
    assert set(changed) <= set(edited)
    for line, (old_op, new_op) in edited.items():
        old_line, new_line = old_lines[line - 1], new_lines[line - 1]
        old_dict, new_dict = (
            _spelled(old_op, old_op.attributes),
            _spelled(new_op, new_op.attributes),
        )
        if old_dict and new_dict:
            assert new_line.replace(new_dict, "@", 1) == old_line.replace(old_dict, "@", 1)
        elif new_dict:
            assert new_line.replace(" " + new_dict, "", 1) == old_line
        else:
            assert old_line.replace(" " + old_dict, "", 1) == new_line
    assert _attrs(ir.parse(new_text)) == _attrs(after)
    return changed


@pytest.fixture
def sample() -> ir.Module:
    module = ir.parse(SAMPLE)
    assert module.print() == SAMPLE
    return module


# -- placement of a new dictionary, per op format --------------------------------------------


@pytest.mark.parametrize(
    ("name", "nth", "expected"),
    [
        ("arith.constant", 0, "%c0_i32 = arith.constant {ttg.partition = array<i32: 0>} 0 : i32"),
        ("arith.constant", 2, "%true = arith.constant {ttg.partition = array<i32: 0>} true"),
        (
            "arith.constant",
            3,
            "%cst = arith.constant {ttg.partition = array<i32: 0>} dense<0.000000e+00> : tensor",
        ),
        ("arith.addf", 0, "%d = arith.addf %s, %s {ttg.partition = array<i32: 0>} : tensor"),
        ("scf.yield", 0, "scf.yield {ttg.partition = array<i32: 0>} %s : tensor"),
        ("scf.yield", 2, "scf.yield {ttg.partition = array<i32: 0>} %r, %t2 : tensor"),
        ("arith.maxnumf", 0, "%mx = arith.maxnumf %a, %b {ttg.partition = array<i32: 0>} : f32"),
        ("tt.reduce.return", 0, "tt.reduce.return %mx {ttg.partition = array<i32: 0>} : f32"),
        ("tt.reduce", 0, "}) {ttg.partition = array<i32: 0>} : (tensor<16x16xf32, #blocked>)"),
        ("scf.if", 0, "} {ttg.partition = array<i32: 0>} loc(#loc2)"),
        ("scf.if", 1, "} {ttg.partition = array<i32: 0>} loc(#loc2)"),
        ("scf.for", 1, "} {ttg.partition = array<i32: 0>} loc(#loc2)"),
        ("tt.return", 0, "tt.return {ttg.partition = array<i32: 0>} loc(#loc1)"),
    ],
)
def test_new_dictionary_placement(sample, name, nth, expected) -> None:
    op = _op(sample, name, nth)
    assert not op.attributes
    op.set_attr("ttg.partition", PART)
    printed = sample.print()
    assert expected in printed
    changed = _check_minimal_diff(ir.parse(SAMPLE), sample)
    assert len(changed) == 1
    assert ir.parse(printed).walk().__next__() is not None
    assert _op(ir.parse(printed), name, nth).attr("ttg.partition") == (0,)


def test_scf_if_with_else_gets_dictionary_after_last_region(sample) -> None:
    op = _op(sample, "scf.if", 1)
    op.set_attr("ttg.partition", PART)
    lines = sample.print().splitlines()
    assert lines[18].strip() == "} else {"
    assert lines[20].strip() == "} {ttg.partition = array<i32: 0>} loc(#loc2)"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "arith.cmpi",
            "%p = arith.cmpi eq, %i, %c0_i32 {loop.cluster = 1 : i32, loop.stage = 0 : i32, "
            "ttg.partition = array<i32: 0>} : i32 loc(#loc2)",
        ),
        (
            "scf.for",
            "} {tt.warp_specialize, ttg.partition = array<i32: 0>} loc(#loc2)",
        ),
        (
            "tt.func",
            'loc("n"(#loc))) attributes {noinline = false, ttg.partition = array<i32: 0>} {',
        ),
        (
            "module",
            'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
            'ttg.partition = array<i32: 0>, ttg.target = "cuda:90", '
            '"ttg.threads-per-warp" = 32 : i32} {',
        ),
    ],
)
def test_add_to_existing_dictionary_keeps_name_order(sample, name, expected) -> None:
    _op(sample, name).set_attr("ttg.partition", PART)
    assert expected in sample.print()
    assert len(_check_minimal_diff(ir.parse(SAMPLE), sample)) == 1


def test_replace_value(sample) -> None:
    op = _op(sample, "arith.cmpi")
    op.set_attr("loop.stage", ir.i32(3))
    assert list(op.attributes) == ["loop.cluster", "loop.stage"]
    assert "{loop.cluster = 1 : i32, loop.stage = 3 : i32} : i32" in sample.print()
    assert _op(ir.parse(sample.print()), "arith.cmpi").attr("loop.stage") == 3
    _check_minimal_diff(ir.parse(SAMPLE), sample)


def test_setting_the_same_value_is_no_edit(sample) -> None:
    _op(sample, "arith.cmpi").set_attr("loop.stage", "0 : i32")
    _op(sample, "scf.for").set_attr("tt.warp_specialize", None)
    assert sample.print() == SAMPLE


def test_set_then_remove_restores_text(sample) -> None:
    for op in sample.walk():
        op.set_attr("zz.tmp", None)
    assert sample.print() != SAMPLE
    for op in sample.walk():
        op.remove_attr("zz.tmp")
    assert sample.print() == SAMPLE


def test_remove_one_of_several(sample) -> None:
    _op(sample, "arith.cmpi").remove_attr("loop.cluster")
    assert "%c0_i32 {loop.stage = 0 : i32} : i32 loc(#loc2)" in sample.print()
    _check_minimal_diff(ir.parse(SAMPLE), sample)


@pytest.mark.parametrize(
    ("name", "attr", "before", "after"),
    [
        (
            "arith.cmpi",
            None,
            "%c0_i32 {loop.cluster = 1 : i32, loop.stage = 0 : i32} : i32",
            "%p = arith.cmpi eq, %i, %c0_i32 : i32 loc(#loc2)",
        ),
        ("scf.for", "tt.warp_specialize", "} {tt.warp_specialize} loc(#loc2)", "    } loc(#loc2)"),
        ("tt.func", "noinline", "attributes {noinline = false} {", '"n"(#loc))) {'),
        ("module", None, "module attributes {", "module {"),
    ],
)
def test_removing_the_last_attribute_drops_braces_and_space(
    sample, name, attr, before, after
) -> None:
    op = _op(sample, name)
    for a in [attr] if attr else list(op.attributes):
        op.remove_attr(a)
    assert not op.attributes
    printed = sample.print()
    assert before not in printed
    assert after in printed
    assert len(_check_minimal_diff(ir.parse(SAMPLE), sample)) == 1
    assert not _op(ir.parse(printed), name).attributes


def test_remove_absent_attribute_is_no_edit(sample) -> None:
    _op(sample, "arith.addi").remove_attr("nothing")
    _op(sample, "arith.cmpi").remove_attr("nothing")
    assert sample.print() == SAMPLE


def test_unit_attributes(sample) -> None:
    op = _op(sample, "arith.addi", 1)
    op.set_attr("tt.unit", None)
    op.set_attr("a.first", "1 : i32")
    assert "%t2 = arith.addi %t, %c1_i32 {a.first = 1 : i32, tt.unit} : i32" in sample.print()
    assert op.attr("tt.unit") is True and op.has_attr("tt.unit")
    again = _op(ir.parse(sample.print()), "arith.addi", 1)
    assert again.attributes["tt.unit"].raw is None and again.attr("tt.unit") is True
    op.set_attr("tt.unit", "2 : i32")  # unit → valued
    assert "{a.first = 1 : i32, tt.unit = 2 : i32}" in sample.print()
    op.set_attr("tt.unit", None)  # and back
    assert "{a.first = 1 : i32, tt.unit}" in sample.print()
    _check_minimal_diff(ir.parse(SAMPLE), sample)


@pytest.mark.parametrize(
    ("name", "spelled"),
    [
        ("ttg.num-warps", '"ttg.num-warps"'),
        ("with space", '"with space"'),
        ('quote"d', '"quote\\"d"'),
        ("back\\slash", '"back\\\\slash"'),
        ("a=b", '"a=b"'),
        ("1st", '"1st"'),
        ("new\nline", '"new\\0Aline"'),
        ("caf\u00e9", '"caf\\C3\\A9"'),
        ("_ok$.x", "_ok$.x"),
    ],
)
def test_names_that_need_quoting(sample, name, spelled) -> None:
    op = _op(sample, "arith.addf")
    op.set_attr(name, ir.i32(5))
    assert f"{{{spelled} = 5 : i32}}" in sample.print()
    again = _op(ir.parse(sample.print()), "arith.addf")
    assert again.attr(name) == 5 and list(again.attributes) == [name]
    _check_minimal_diff(ir.parse(SAMPLE), sample)


def test_replace_quoted_module_attribute(sample) -> None:
    module = _op(sample, "module")
    assert module.attr("ttg.num-warps") == 4
    module.set_attr("ttg.num-warps", ir.i32(8))
    line = sample.print().splitlines()[2]
    assert line.startswith(
        'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32,'
    )
    assert _op(ir.parse(sample.print()), "module").attr("ttg.num-warps") == 8


def test_many_edits_reparse_to_same_attributes(sample) -> None:
    for k, op in enumerate(sample.walk()):
        op.set_attr("ttg.partition", ir.i32_array([k % 3]))
        if op.results and op.regions:
            op.set_attr("ttg.partition.outputs", ir.array_of([PART] * len(op.results)))
        if k % 4 == 0:
            op.set_attr("zz.unit", None)
        if k % 5 == 0 and op.attributes:
            op.remove_attr(next(iter(op.attributes)))
    changed = _check_minimal_diff(ir.parse(SAMPLE), sample)
    assert len(changed) > 20
    printed = sample.print()
    again = ir.parse(printed)
    assert _attrs(again) == _attrs(sample)
    assert again.print() == printed
    # an op's edits survive a second round of editing on the re-read module
    _op(again, "scf.yield").set_attr("ttg.partition", ir.i32_array([1, 2]))
    assert "scf.yield {" in again.print()
    assert _op(ir.parse(again.print()), "scf.yield").attr("ttg.partition") == (1, 2)


def test_walk_covers_combiner_and_terminators(sample) -> None:
    names = [op.name for op in _op(sample, "scf.for").walk()]
    assert names.count("scf.yield") == 3
    assert "tt.reduce.return" in names and "arith.maxnumf" in names


# -- Triton accepts the edited text ----------------------------------------------------------


def _annotate_ws_loops(module: ir.Module) -> int:
    """Annotate every tt.warp_specialize loop as a one-partition schedule; returns ops edited."""
    loops = [
        op for op in module.walk() if op.name == "scf.for" and op.has_attr("tt.warp_specialize")
    ]
    edited = 0
    for loop in loops:
        for op in loop.walk():
            if op is loop:
                continue
            op.set_attr("ttg.partition", PART)
            if op.regions and op.results:
                op.set_attr("ttg.partition.outputs", ir.array_of([PART] * len(op.results)))
            edited += 1
        loop.set_attr("ttg.partition", PART)
        loop.set_attr("ttg.partition.stages", "[0 : i32]")
        loop.set_attr("ttg.warp_specialize.tag", ir.i32(0))
        edited += 1
    return edited


@pytest.mark.triton
def test_triton_accepts_edited_sample() -> None:
    from triton_util import parse_with_triton

    module = ir.parse(SAMPLE)
    for op in module.walk():
        op.set_attr("ttg.partition", PART)
    parse_with_triton(module.print(), 90)


@pytest.mark.triton
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_triton_accepts_annotated_ws_loops(path: Path) -> None:
    from triton_util import capability, parse_with_triton

    text = path.read_text()
    module = ir.parse(text)
    assert _annotate_ws_loops(module) > 0
    printed = module.print()
    assert _attrs(ir.parse(printed)) == _attrs(module)
    _check_minimal_diff(ir.parse(text), module)
    parse_with_triton(printed, capability(path))


@pytest.mark.triton
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_triton_accepts_an_attribute_on_every_op(path: Path) -> None:
    from triton_util import capability, parse_with_triton

    module = ir.parse(path.read_text())
    for op in module.walk():
        op.set_attr("ws.test", ir.i32(1))
    parse_with_triton(module.print(), capability(path))


DATA = Path(__file__).parent / "data"
LATE = sorted(DATA.glob("late_*.ttgir"))
OPS = DATA / "ops_many.sm90.ttgir"  # make_ttgir output of a kernel using many tl.* functions


@pytest.mark.parametrize(
    ("name", "nth", "expected"),
    [
        ("tt.fp_to_fp", 0, "%f8 = tt.fp_to_fp %z_23 {ws.x}, rounding = rtne : tensor"),
        ("tt.fp_to_fp", 1, "%back = tt.fp_to_fp %f8 {ws.x} : tensor"),
        ("scf.condition", 0, "scf.condition(%9) {ws.x} loc(#loc60)"),
        ("scf.condition", 1, "scf.condition(%8) {ws.x} %acc_48, %k_49 : tensor"),
        ("scf.while", 0, "    } attributes {ws.x} loc(#loc58)"),
        ("scf.while", 1, "    } attributes {ws.x} loc(#loc170)"),
        ("tt.scan", 0, "    }) {ws.x} : (tensor<128xf32, #blocked>) -> tensor"),
        ("tt.split", 0, "%outLHS, %outRHS = tt.split %pairs {ws.x} : tensor"),
        ("tt.atomic_cas", 0, "%c0_i32, %c1_i32 {ws.x} : (!tt.ptr<i32>, i32, i32) -> i32"),
    ],
)
def test_new_dictionary_placement_in_other_formats(name: str, nth: int, expected: str) -> None:
    text = OPS.read_text()
    module = ir.parse(text)
    _op(module, name, nth).set_attr("ws.x", None)
    assert expected in module.print()
    assert len(_check_minimal_diff(ir.parse(text), module)) == 1


@pytest.mark.triton36
@pytest.mark.parametrize("path", sorted(DATA.glob("*.ttgir")), ids=lambda p: p.name)
def test_triton_accepts_an_attribute_on_every_op_of_other_ir(path: Path) -> None:
    """IR after make_ttgir (ttg.warp_specialize, barriers, TMA copies, wgmma waits, while
    loops, scans, fp8 casts, atomics, ...) and the hand-written sample."""
    from triton_util import capability, parse_with_triton

    text = path.read_text()
    module = ir.parse(text)
    for op in module.walk():
        op.set_attr("ws.test", ir.i32(1))
    _check_minimal_diff(ir.parse(text), module)
    parse_with_triton(module.print(), capability(path))


def test_warp_specialize_dictionary() -> None:
    """`ttg.warp_specialize(...) attributes {...}` ends the op's first line."""
    path = next(p for p in LATE if p.name.endswith(".sm100.ttgir"))
    module = ir.parse(path.read_text())
    ws = _op(module, "ttg.warp_specialize")
    ws.remove_attr("requestedRegisters")
    printed = module.print()
    assert printed.splitlines()[ws.line - 1].endswith("%off_n)")
    again = ir.parse(printed)
    ws = _op(again, "ttg.warp_specialize")
    assert not ws.attributes
    ws.set_attr("ws.test", None)
    lines = again.print().splitlines()
    assert lines[ws.line - 1].endswith("%off_n) attributes {ws.test}")
    assert lines[ws.line] == "    default {"
    assert _op(ir.parse(again.print()), "ttg.warp_specialize").attr("ws.test") is True


def test_keyword_dictionary_on_module_and_function_without_one() -> None:
    text = "module {\n  tt.func @f(%x: i32) -> i32 {\n    tt.return %x : i32\n  }\n}\n"
    module = ir.parse(text)
    _op(module, "module").set_attr("ttg.target", '"cuda:90"')
    _op(module, "tt.func").set_attr("noinline", "false")
    assert module.print() == (
        'module attributes {ttg.target = "cuda:90"} {\n'
        "  tt.func @f(%x: i32) -> i32 attributes {noinline = false} {\n"
        "    tt.return %x : i32\n  }\n}\n"
    )
    assert _attrs(ir.parse(module.print())) == _attrs(module)


def test_barrier_expect_dictionary_goes_before_the_predicate() -> None:
    text = (
        "module {\n  tt.func @f(%b: !ttg.memdesc<1xi64, #s, #smem, mutable>, %p: i1) {\n"
        "    ttng.barrier_expect %b, 16384, %p : !ttg.memdesc<1xi64, #s, #smem, mutable>\n"
        "    tt.return\n  }\n}\n"
    )
    module = ir.parse(text)
    _op(module, "ttng.barrier_expect").set_attr("ttg.partition", PART)
    assert "ttng.barrier_expect %b, 16384 {ttg.partition = array<i32: 0>}, %p : " in module.print()


@pytest.mark.triton
def test_triton_reads_quoted_names_back() -> None:
    """Names that need quoting, printed by us, read by Triton, printed by Triton, read by us."""
    from triton_util import parse_with_triton

    names = ["ttg.num-x", 'q"uote', "back\\slash", "a=b", "new\nline", "caf\u00e9", "ok.name"]
    module = ir.parse(SAMPLE)
    op = _op(module, "arith.addf")
    for k, name in enumerate(names):
        op.set_attr(name, ir.i32(k))
    printed_by_triton = parse_with_triton(module.print(), 90).str()
    again = _op(ir.parse(printed_by_triton), "arith.addf")
    assert {a.name: a.value for a in again.attributes.values()} == {
        n: k for k, n in enumerate(names)
    }


def test_corpus_is_present() -> None:
    assert CORPUS

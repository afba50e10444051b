"""Every corpus TTGIR file reads and prints back byte for byte, and reads into a sane graph."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import corpus
from ws_solver import ir
from ws_solver.ir import types as T

REPO_ROOT = Path(__file__).resolve().parent.parent
TTGIR_DIR = corpus.ttgir_dir()
CORPUS = sorted(TTGIR_DIR.glob("*.ttgir"))
INDEX = {e["file"]: e for e in json.loads((TTGIR_DIR / "index.json").read_text())}

# A line that starts an op: `%r = ...`, `%r:2 = ...`, `name ...`, `"generic.op"(...)`.
_OP_LINE_RE = re.compile(r'\s*(?:%|[A-Za-z_]|"[A-Za-z_])')


def _ids(path: Path) -> str:
    return path.name


def _ws_loops(module: ir.Module) -> list[ir.Op]:
    return [
        op for op in module.walk() if op.name == "scf.for" and op.has_attr("tt.warp_specialize")
    ]


def _values(module: ir.Module):
    for op in module.walk():
        yield from op.results
        for region in op.regions:
            for block in region.blocks:
                yield from block.arguments


def test_corpus_is_present() -> None:
    assert len(CORPUS) >= 10, f"no TTGIR corpus in {TTGIR_DIR}"
    assert {p.name for p in CORPUS} == set(INDEX)


@pytest.fixture(params=CORPUS, ids=_ids)
def corpus_file(request) -> tuple[Path, str, ir.Module]:
    text = request.param.read_text()
    return request.param, text, ir.parse(text)


def test_print_is_byte_identical(corpus_file) -> None:
    path, text, module = corpus_file
    assert module.print() == text
    # Reading bytes rules out newline translation hiding a difference.
    assert module.print().encode() == path.read_bytes()


def test_op_count_matches_op_lines(corpus_file) -> None:
    _, text, module = corpus_file
    ops = list(module.walk())
    op_lines = [
        n
        for n, line in enumerate(text.splitlines(), 1)
        if _OP_LINE_RE.match(line) and not line.lstrip().startswith(("#", "}", "^"))
    ]
    assert [op.line for op in ops] == op_lines
    counts = Counter(op.name for op in ops)
    assert [op.name for op in module.ops] == ["module"]
    assert counts["tt.func"] >= 1
    assert counts["tt.return"] == counts["tt.func"]
    assert counts["scf.for"] >= 1  # (loops without iter_args print no scf.yield)
    assert counts["tt.reduce.return"] == counts["tt.reduce"]
    assert 20 <= len(ops) <= 2000


def test_ws_loops(corpus_file) -> None:
    path, _, module = corpus_file
    loops = _ws_loops(module)
    assert len(loops) == INDEX[path.name]["ws_loops"] >= 1
    for loop in loops:
        body = loop.body
        assert body.ops
        # induction variable + one iter_arg per result, typed from the loop's signature
        assert len(body.arguments) == len(loop.results) + 1
        assert body.arguments[0].type.kind == T.SCALAR
        for arg, result in zip(body.arguments[1:], loop.results, strict=True):
            assert arg.type == result.type
            assert result.type.kind != T.OTHER
        if loop.results:  # a loop without iter_args prints no scf.yield
            terminator = body.ops[-1]
            assert terminator.name == "scf.yield"
            yielded = [v.type.kind for v in terminator.operands]
            assert yielded == [r.type.kind for r in loop.results]
        nested = [op for op in loop.walk() if op is not loop]
        assert nested
        for op in nested:
            _check_result_kinds(op)


def _check_result_kinds(op: ir.Op) -> None:
    kinds = [r.type.kind for r in op.results]
    if op.name == "tt.descriptor_load":
        assert kinds == [T.TENSOR]
    elif op.name == "ttg.local_alloc":
        assert kinds == [T.MEMDESC]
        assert op.results[0].type.memory == T.SHARED_MEMORY
    elif op.name == "ttng.tmem_alloc":
        assert kinds in ([T.MEMDESC], [T.MEMDESC, T.TOKEN])
        assert op.results[0].type.memory == T.TENSOR_MEMORY
    elif op.name == "ttng.tc_gen5_mma":
        assert kinds in ([], [T.TOKEN])
    elif op.name == "ttng.warp_group_dot":
        assert kinds == [T.TENSOR]
    elif op.name in ("arith.cmpi", "arith.cmpf"):
        assert len(kinds) == 1 and op.results[0].type.element == "i1"
        assert op.results[0].type.kind == op.operands[0].type.kind
    elif op.name == "tt.load":
        assert op.results[0].type.element == op.operands[0].type.element[len("!tt.ptr<") : -1]
    for result in op.results:
        assert result.type.kind != T.OTHER, (op, result)
        if result.type.kind in (T.TENSOR, T.MEMDESC):
            assert result.type.shape and result.type.element_bits > 0
            assert result.type.bytes > 0


def test_uses_match_operands(corpus_file) -> None:
    _, _, module = corpus_file
    values = list(_values(module))
    assert len({id(v) for v in values}) == len(values)
    defined = {id(v) for v in values}
    operands = 0
    for op in module.walk():
        for i, value in enumerate(op.operands):
            assert id(value) in defined
            assert ir.Use(op, i) in value.uses
            operands += 1
        for i, result in enumerate(op.results):
            assert result.owner is op and result.index == i and result.defining_op is op
    for value in values:
        for use in value.uses:
            assert use.op.operands[use.operand_index] is value
    assert sum(len(v.uses) for v in values) == operands


def test_operands_are_the_percent_tokens(corpus_file) -> None:
    """Every `%x` use on an op's line is an operand, in textual order."""
    _, text, module = corpus_file
    lines = text.splitlines()
    for op in module.walk():
        if op.regions or op.generic:
            continue  # region ops also define block arguments on their line
        line = lines[op.line - 1]
        rhs = line.split(" = ", 1)[1] if op.results else line
        names = re.findall(r"%[A-Za-z0-9_$.\-]+(?:#[0-9]+)?", rhs)
        assert [v.name for v in op.operands] == names, line


def test_definitions_enclose_uses(corpus_file) -> None:
    """Every operand is defined in the block of its use or in a block enclosing it."""
    _, _, module = corpus_file
    for op in module.walk():
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, ir.Op):
                assert owner.parent is op.parent or owner.parent in _enclosing_blocks(op)
            else:
                assert owner is op.parent or owner in _enclosing_blocks(op)


def _enclosing_blocks(op: ir.Op) -> list[ir.Block]:
    blocks = []
    for ancestor in op.ancestors():
        if ancestor.parent is not None:
            blocks.append(ancestor.parent)
        blocks.extend(b for r in ancestor.regions for b in r.blocks)
    return blocks


# -- IR after make_ttgir (warp-specialized and pipelined), as Triton 3.6 prints it -------------

DATA = Path(__file__).parent / "data"
LATE = sorted(DATA.glob("late_*.ttgir"))


@pytest.mark.parametrize("path", sorted(DATA.glob("*.ttgir")), ids=_ids)
def test_other_ir_round_trips(path: Path) -> None:
    text = path.read_text()
    module = ir.parse(text)
    assert module.print() == text
    test_uses_match_operands((path, text, module))
    for op in module.walk():
        for result in op.results:
            assert result.type.kind != T.OTHER, (op, result)


def test_warp_specialize_is_one_op_with_its_regions() -> None:
    path = next(p for p in LATE if p.name.endswith(".sm100.ttgir"))
    text = path.read_text()
    module = ir.parse(text)
    names = [op.name for op in module.walk()]
    assert "default" not in names and not any(n.startswith("partition") for n in names)
    (ws,) = [op for op in module.walk() if op.name == "ttg.warp_specialize"]
    lines = text.splitlines()
    assert lines[ws.line - 1].lstrip().startswith("ttg.warp_specialize(")
    assert ws.attr("requestedRegisters") == (24, 24)
    assert ws.results == [] and ws.location == "loc(#loc52)"
    default, *partitions = ws.regions
    assert len(partitions) == 2
    assert not default.blocks[0].arguments
    assert default.ops[-1].name == "ttg.warp_yield"
    for region in partitions:
        args = region.blocks[0].arguments
        assert [a.type for a in args] == [v.type for v in ws.operands]
        assert region.ops[-1].name == "ttg.warp_return"
        loops = [op for op in region.ops if op.name == "scf.for"]
        assert loops and all(op.has_attr("tt.warp_specialize") for op in loops)
        # partitions are isolated: their ops use the partition's arguments, not outer values
        inner = {id(v) for op in region.ops for v in op.operands}
        assert not inner & {id(v) for v in ws.operands}
    after = ws.parent.ops[ws.parent.ops.index(ws) + 1]
    assert after.name == "ttng.inval_barrier"
    assert lines[after.line - 1].lstrip().startswith("ttng.inval_barrier")


def test_result_types_of_other_formats() -> None:
    module = ir.parse((DATA / "ops_many.sm90.ttgir").read_text())
    ops = {op.name: op for op in module.walk()}
    split = ops["tt.split"]
    assert [r.type.text for r in split.results] == ["tensor<128xf32, #blocked>"] * 2
    assert ops["tt.atomic_cas"].results[0].type.kind == T.SCALAR
    assert ops["tt.histogram"].results[0].type.shape == (16,)
    (f8, _) = [op for op in module.walk() if op.name == "tt.fp_to_fp"]
    assert f8.results[0].type.element == "f8E4M3FN" and f8.results[0].type.bytes == 128
    loops = [op for op in module.walk() if op.name == "scf.while"]
    assert [len(w.results) for w in loops] == [0, 2]
    before, after = loops[1].regions
    assert [a.name for a in before.blocks[0].arguments] == ["%acc_48", "%k_49"]
    assert len(after.blocks[0].arguments) == 2 and after.blocks[0].label == "^bb0"
    assert before.ops[-1].name == "scf.condition" and after.ops[-1].name == "scf.yield"


@pytest.mark.triton
@pytest.mark.parametrize("path", CORPUS, ids=_ids)
def test_ir_printed_without_locations(path: Path) -> None:
    """Triton's `str_nodebug()` drops every `loc(...)`: ops then end at bare names."""
    from triton_util import capability, parse_with_triton

    with_locs = ir.parse(path.read_text())
    text = parse_with_triton(path.read_text(), capability(path)).str_nodebug()
    assert " loc(" not in text
    module = ir.parse(text)
    assert module.print() == text
    assert [op.name for op in module.walk()] == [op.name for op in with_locs.walk()]
    kinds = [[r.type.kind for r in op.results] for op in module.walk()]
    assert kinds == [[r.type.kind for r in op.results] for op in with_locs.walk()]

"""Damaged and random text: `parse` either succeeds (and prints the text back) or raises
ParseError; no other exception may escape. Plus the positions of typical error messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ws_solver import ir

pytestmark = pytest.mark.slow  # mutates every corpus file many times

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((REPO_ROOT / "corpus" / "ttgir").glob("*.ttgir"))
DATA = Path(__file__).parent / "data"
# The hand-written sample and IR after make_ttgir: the repository's files only, so that every
# machine fuzzes the same inputs (no folder of this machine's, such as /tmp/proto, is read).
EXTRA = sorted(DATA.glob("*.ttgir"))
TEXTS = [p.read_text() for p in CORPUS + EXTRA]
# The smallest texts keep each example cheap; the exhaustive tests below use one of them.
SMALL = sorted(TEXTS, key=len)[:8]

FUZZ = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BRACKETS = "{}()[]<>"
SYNTAX = '{}()[]<>%#^@!"=:,.-> \n\tx0_'


def test_the_inputs_are_the_repository_s() -> None:
    inputs = CORPUS + EXTRA
    assert inputs and all(p.resolve().is_relative_to(REPO_ROOT) for p in inputs)


def _check(text: str) -> None:
    """The property every input must satisfy."""
    try:
        module = ir.parse(text)
    except ir.ParseError as exc:
        assert exc.line >= 1 and exc.column >= 1
        assert exc.line <= text.count("\n") + 1
        return
    assert module.print() == text
    for op in module.walk():  # a successful parse gives a consistent graph
        for i, value in enumerate(op.operands):
            assert ir.Use(op, i) in value.uses
        assert len(op.results) == len({id(r) for r in op.results})


def test_corpus_is_present() -> None:
    assert len(TEXTS) >= len(CORPUS) > 0


@FUZZ
@given(text=st.sampled_from(TEXTS), data=st.data())
def test_truncation(text: str, data) -> None:
    cut = data.draw(st.integers(0, len(text)))
    _check(text[:cut])


@FUZZ
@given(text=st.sampled_from(TEXTS), data=st.data())
def test_delete_a_bracket(text: str, data) -> None:
    positions = [i for i, ch in enumerate(text) if ch in BRACKETS]
    i = data.draw(st.sampled_from(positions))
    _check(text[:i] + text[i + 1 :])


@FUZZ
@given(
    text=st.sampled_from(TEXTS),
    data=st.data(),
    insert=st.text(alphabet=st.sampled_from(SYNTAX) | st.characters(), min_size=1, max_size=4),
)
def test_insert_characters(text: str, data, insert: str) -> None:
    i = data.draw(st.integers(0, len(text)))
    _check(text[:i] + insert + text[i:])


@FUZZ
@given(text=st.sampled_from(TEXTS), data=st.data())
def test_replace_a_character(text: str, data) -> None:
    i = data.draw(st.integers(0, len(text) - 1))
    ch = data.draw(st.sampled_from(SYNTAX))
    _check(text[:i] + ch + text[i + 1 :])


@FUZZ
@given(text=st.sampled_from(TEXTS), data=st.data())
def test_swap_two_lines(text: str, data) -> None:
    lines = text.splitlines(keepends=True)
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    _check("".join(lines))


@FUZZ
@given(text=st.sampled_from(TEXTS), data=st.data())
def test_delete_a_line_or_token(text: str, data) -> None:
    lines = text.splitlines(keepends=True)
    i = data.draw(st.integers(0, len(lines) - 1))
    words = lines[i].split(" ")
    if data.draw(st.booleans()) and len(words) > 1:
        del words[data.draw(st.integers(0, len(words) - 1))]
        lines[i] = " ".join(words)
    else:
        del lines[i]
    _check("".join(lines))


WS_TEXT = (DATA / "late_gemm_tma.sm100.ttgir").read_text()
WS_LINES = WS_TEXT.splitlines(keepends=True)
WS_FIRST = next(i for i, ln in enumerate(WS_LINES) if "ttg.warp_specialize(" in ln)
WS_LAST = next(i for i, ln in enumerate(WS_LINES) if ln.startswith("    } : ("))


@FUZZ
@given(data=st.data())
def test_damaged_multi_line_op(data) -> None:
    """ttg.warp_specialize spans lines: cut, drop or duplicate lines inside it."""
    lines = list(WS_LINES)
    i = data.draw(st.integers(WS_FIRST, WS_LAST))
    action = data.draw(st.sampled_from(["cut", "drop", "repeat", "strip-signature"]))
    if action == "cut":
        _check("".join(lines[:i]) + lines[i][: data.draw(st.integers(0, len(lines[i])))])
        return
    if action == "drop":
        del lines[i]
    elif action == "repeat":
        lines.insert(i, lines[i])
    else:
        lines[WS_LAST] = "    }\n"
    _check("".join(lines))


@FUZZ
@given(st.text())
def test_random_text(text: str) -> None:
    _check(text)


@FUZZ
@given(st.binary())
def test_random_bytes(data: bytes) -> None:
    _check(data.decode("utf-8", errors="replace"))


@FUZZ
@given(st.lists(st.sampled_from(["{", "}", "(", ")", "%a", "=", ":", "\n", " ", "op", "^bb0"])))
def test_random_syntax(tokens: list[str]) -> None:
    _check("".join(tokens))


@FUZZ
@given(lines=st.lists(st.sampled_from(sorted({ln for t in SMALL for ln in t.splitlines()}))))
def test_shuffled_corpus_lines(lines: list[str]) -> None:
    _check("\n".join(lines))


def test_every_single_bracket_deletion_of_a_small_file() -> None:
    text = SMALL[0]
    for i, ch in enumerate(text):
        if ch in BRACKETS:
            _check(text[:i] + text[i + 1 :])


def test_every_line_truncation_of_a_small_file() -> None:
    text = SMALL[0]
    cut = 0
    for line in text.splitlines(keepends=True):
        cut += len(line)
        _check(text[:cut])
        _check(text[: cut - len(line) // 2])


def test_non_text_input() -> None:
    with pytest.raises(ir.ParseError):
        ir.parse(b"module {\n}\n")  # type: ignore[arg-type]


# -- error messages and positions --------------------------------------------------------------

PROGRAM = """\
module {
  tt.func @f(%n: i32) {
    %c1 = arith.constant 1 : i32
    %a = arith.addi %n, %c1 : i32
    scf.for %i = %c1 to %n step %c1  : i32 {
      %b = arith.muli %a, %i : i32
    }
    tt.return
  }
}
"""


def _error(text: str) -> ir.ParseError:
    with pytest.raises(ir.ParseError) as info:
        ir.parse(text)
    return info.value


def test_program_parses() -> None:
    assert ir.parse(PROGRAM).print() == PROGRAM


def test_undefined_value() -> None:
    err = _error(PROGRAM.replace("arith.muli %a, %i", "arith.muli %a, %zz"))
    assert (err.line, err.column) == (6, 27)
    assert "undefined value %zz" in str(err) and str(err).startswith("line 6, column 27:")


def test_value_used_outside_its_region() -> None:
    err = _error(PROGRAM.replace("    tt.return\n", "    tt.return %b\n"))
    assert err.line == 8 and "undefined value %b" in err.reason


def test_missing_result_index() -> None:
    err = _error(PROGRAM.replace("arith.muli %a, %i", "arith.muli %a#1, %i"))
    assert err.line == 6 and "%a has 1 results, no #1" in err.reason


def test_redefinition() -> None:
    err = _error(PROGRAM.replace("%a = arith.addi", "%c1 = arith.addi"))
    assert err.line == 4 and "redefinition of value %c1" in err.reason


def test_unbalanced_closing_paren() -> None:
    err = _error(PROGRAM.replace("%a = arith.addi %n, %c1 : i32", "%a = arith.addi %n, %c1) : i32"))
    assert (err.line, err.column) == (4, 28)
    assert "unbalanced ')'" in err.reason


def test_unclosed_paren() -> None:
    err = _error(PROGRAM.replace("%a = arith.addi %n, %c1 : i32", "%a = arith.addi (%n, %c1 : i32"))
    assert (err.line, err.column) == (4, 21)
    assert "unclosed '('" in err.reason


def test_unclosed_dictionary() -> None:
    err = _error(PROGRAM.replace("%n, %c1 : i32", "%n, %c1 {x = 1 : i32"))
    assert (err.line, err.column) == (4, 29)
    assert "unclosed '{'" in err.reason


def test_unterminated_string() -> None:
    err = _error(PROGRAM.replace("tt.return\n", 'tt.return loc("f.py:3)\n'))
    assert (err.line, err.column) == (8, 19)
    assert err.reason == "unterminated string"


def test_eof_inside_region() -> None:
    """Reported at the `{` of the innermost region left open."""
    text = PROGRAM[: PROGRAM.index("    }\n")]
    err = _error(text)
    line5 = PROGRAM.splitlines()[4]
    assert (err.line, err.column) == (5, line5.index("{") + 1)
    assert err.reason == "unclosed region in 'scf.for' (line 5)"
    err = _error(PROGRAM[: PROGRAM.index("    tt.return")])
    assert (err.line, err.column) == (2, PROGRAM.splitlines()[1].index("{") + 1)
    assert "'tt.func' (line 2)" in err.reason


def test_eof_inside_op() -> None:
    err = _error("module {\n  %a = ")
    assert (err.line, err.column) == (2, 8) and "end of input" in err.reason
    err = _error("module {\n  %a, ")
    assert err.line == 2 and "end of input" in err.reason


def test_op_ends_at_its_line_end() -> None:
    """An op with nothing after its name (no location) does not swallow the next line."""
    module = ir.parse("module {\n  tt.return\n  %a = foo.bar\n  foo.use %a\n}\n")
    ops = [op.name for op in module.walk()]
    assert ops == ["module", "tt.return", "foo.bar", "foo.use"]
    assert not list(module.walk())[1].operands


def test_unexpected_character() -> None:
    err = _error(PROGRAM.replace("%c1 = arith.constant 1", "%c1 = arith.constant 1 ~"))
    assert (err.line, err.column) == (3, 28) and err.reason == "unexpected '~'"


def test_deep_nesting_is_a_parse_error() -> None:
    depth = 5000
    text = "".join(f"{' ' * i}scf.if %c {{\n" for i in range(depth)) + "}\n" * depth
    err = _error(text)
    assert err.line >= 1


def test_huge_result_count_and_index() -> None:
    big = "9" * 5000
    _check(f"%a:{big} = op\n")
    _check(f"%a = op\nop2 %a#{big}\n")
    _check("%a:2 = arith.constant true\n%b:3 = tt.load %a#0 : i32\n%c:2 = tt.addptr %b#1 : i32\n")

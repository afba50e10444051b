"""Unit tests of ws_solver.ir.attributes: values, dictionaries, spelling of names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ws_solver import ir
from ws_solver.ir.attributes import Attribute, parse_dictionary, parse_value, print_dictionary


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("0 : i32", 0),
        ("-3 : i32", -3),
        ("7 : i64", 7),
        ("1 : si32", 1),
        ("255 : ui8", 255),
        ("4 : index", 4),
        ("12", 12),
        (" 5  :  i32 ", 5),
        ("true", True),
        ("false", False),
        ("array<i32>", ()),
        ("array<i32: 0>", (0,)),
        ("array<i32: 1, 0>", (1, 0)),
        ("array<i64: -1, 2, 3>", (-1, 2, 3)),
        ("[0 : i32]", [0]),
        ("[]", []),
        ("[0 : i32, 2 : i32]", [0, 2]),
        ("[array<i32: 0>, array<i32: 1, 2>, array<i32>]", [(0,), (1, 2), ()]),
        ("[[1, 2], [true]]", [[1, 2], [True]]),
        ('"cuda:100"', "cuda:100"),
        ('""', ""),
        ('"a\\"b"', 'a"b'),
        ('"back\\\\slash"', "back\\slash"),
        ('"new\\0Aline"', "new\nline"),
        ('"tab\\t"', "tab\t"),
        ('"caf\\C3\\A9"', "caf\u00e9"),
    ],
)
def test_parse_value(raw: str, value) -> None:
    assert parse_value(raw) == value
    assert type(parse_value(raw)) is type(value)


@pytest.mark.parametrize(
    "raw",
    [
        "1.5 : f32",
        "dense<0.0> : tensor<4xf32>",
        "#ttg.blocked<{order = [1, 0]}>",
        "array<f32: 1.0>",
        "array<i32: x>",
        "[1, #foo]",
        "@symbol",
        "unit",
        "9" * 100,  # beyond any integer type
        "",
    ],
)
def test_parse_value_unknown_kinds_are_none(raw: str) -> None:
    assert parse_value(raw) is None


def test_attribute_value_and_print() -> None:
    assert Attribute("tt.warp_specialize", None).value is True
    assert Attribute("tt.warp_specialize", None).print() == "tt.warp_specialize"
    assert Attribute("loop.stage", "2 : i32").value == 2
    assert Attribute("loop.stage", "2 : i32").print() == "loop.stage = 2 : i32"


@pytest.mark.parametrize(
    ("name", "printed"),
    [
        ("ttg.num-warps", '"ttg.num-warps" = 4 : i32'),
        ("ttg.partition", "ttg.partition = 4 : i32"),
        ("_x$1.y", "_x$1.y = 4 : i32"),
        ("9lives", '"9lives" = 4 : i32'),
        ("has space", '"has space" = 4 : i32'),
        ('q"uote', '"q\\"uote" = 4 : i32'),
        ("b\\s", '"b\\\\s" = 4 : i32'),
        ("", '"" = 4 : i32'),
        ("nl\n", '"nl\\0A" = 4 : i32'),
    ],
)
def test_print_quotes_names_that_are_not_bare_identifiers(name: str, printed: str) -> None:
    attr = Attribute(name, "4 : i32")
    assert attr.print() == printed
    assert parse_dictionary(printed) == [attr]


def test_print_dictionary() -> None:
    attrs = [
        Attribute("loop.cluster", "1 : i32"),
        Attribute("tt.warp_specialize", None),
        Attribute("ttg.num-warps", "4 : i32"),
        Attribute("ttg.partition", ir.i32_array([0, 1])),
    ]
    text = print_dictionary(attrs)
    assert text == (
        '{loop.cluster = 1 : i32, tt.warp_specialize, "ttg.num-warps" = 4 : i32, '
        "ttg.partition = array<i32: 0, 1>}"
    )
    assert parse_dictionary(text[1:-1]) == attrs
    assert print_dictionary([]) == "{}"


def test_parse_dictionary_keeps_raw_text() -> None:
    body = (
        'a = #ttg.slice<{dim = 1, parent = #blocked}>, "b=c" = "x, y", d, '
        "e = affine_map<(d0) -> (d0)>, f = [0 : i32, 1 : i32]"
    )
    attrs = parse_dictionary(body)
    assert [(a.name, a.raw) for a in attrs] == [
        ("a", "#ttg.slice<{dim = 1, parent = #blocked}>"),
        ("b=c", '"x, y"'),
        ("d", None),
        ("e", "affine_map<(d0) -> (d0)>"),
        ("f", "[0 : i32, 1 : i32]"),
    ]
    assert parse_dictionary("") == []


@pytest.mark.parametrize(
    "body",
    ["a =", "a = 1,", ", a", "1a = 2", '"open = 1', "a b = 1", '"a" b = 1', "= 1", "a = 1,, b"],
)
def test_parse_dictionary_rejects(body: str) -> None:
    with pytest.raises(ValueError):
        parse_dictionary(body)


def test_spellings() -> None:
    assert ir.i32(0) == "0 : i32"
    assert ir.i32(-2) == "-2 : i32"
    assert ir.i32_array([]) == "array<i32>"
    assert ir.i32_array([0]) == "array<i32: 0>"
    assert ir.i32_array((2, 0, 1)) == "array<i32: 2, 0, 1>"
    assert ir.array_of([]) == "[]"
    assert ir.array_of([ir.i32_array([0]), ir.i32_array([1])]) == "[array<i32: 0>, array<i32: 1>]"
    for values in ([], [0], [3, 1, 2]):
        assert parse_value(ir.i32_array(values)) == tuple(values)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(name=st.text(min_size=0, max_size=12), value=st.integers(-(2**31), 2**31 - 1))
def test_any_name_round_trips(name: str, value: int) -> None:
    attr = Attribute(name, ir.i32(value))
    parsed = parse_dictionary(print_dictionary([attr])[1:-1])
    assert parsed == [attr]
    assert parsed[0].value == value


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.integers(-1000, 1000), max_size=4), max_size=4))
def test_nested_i32_arrays_round_trip(values: list[list[int]]) -> None:
    raw = ir.array_of([ir.i32_array(v) for v in values])
    assert parse_value(raw) == [tuple(v) for v in values]

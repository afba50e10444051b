"""Unit tests of ws_solver.ir.types: classifying printed MLIR types."""

from __future__ import annotations

import pytest

from ws_solver.ir import types as T
from ws_solver.ir.types import parse_type, split_top_level

ALIASES = {
    "#smem": "#ttg.shared_memory",
    "#tmem_space": "#ttng.tensor_memory",
    "#shared": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false}>",
}


def test_tensor_with_encoding() -> None:
    t = parse_type("tensor<128x64xf16, #blocked>")
    assert (t.kind, t.shape, t.element, t.encoding) == (T.TENSOR, (128, 64), "f16", "#blocked")
    assert t.num_elements == 128 * 64 and t.element_bits == 16 and t.bytes == 128 * 64 * 2
    assert t.text == "tensor<128x64xf16, #blocked>" and t.memory == ""


def test_tensor_with_nested_encoding() -> None:
    text = "tensor<2xf32, #ttg.slice<{dim = 1, parent = #blocked}>>"
    t = parse_type(f"  {text} ")
    assert t.text == text
    assert (t.kind, t.shape, t.element) == (T.TENSOR, (2,), "f32")
    assert t.encoding == "#ttg.slice<{dim = 1, parent = #blocked}>"


def test_tensor_without_encoding_and_rank_0() -> None:
    t = parse_type("tensor<4x8xi32>")
    assert (t.shape, t.element, t.encoding, t.bytes) == ((4, 8), "i32", "", 128)
    t = parse_type("tensor<f32>")
    assert (t.kind, t.shape, t.element, t.num_elements, t.bytes) == (T.TENSOR, (), "f32", 1, 4)


def test_tensor_of_pointers() -> None:
    t = parse_type("tensor<128x!tt.ptr<f32>, #blocked>")
    assert (t.kind, t.shape, t.element, t.encoding) == (
        T.TENSOR,
        (128,),
        "!tt.ptr<f32>",
        "#blocked",
    )
    assert t.element_bits == 64 and t.bytes == 128 * 8
    loaded = T.pointee(t)
    assert (loaded.kind, loaded.shape, loaded.element, loaded.encoding) == (
        T.TENSOR,
        (128,),
        "f32",
        "#blocked",
    )
    assert T.pointee(parse_type("!tt.ptr<f16>")) == parse_type("f16")
    assert T.pointee(parse_type("i32")) is T.UNKNOWN


def test_with_element() -> None:
    t = T.with_element(parse_type("tensor<128xi32, #blocked>"), "i1")
    assert (t.kind, t.shape, t.element, t.encoding, t.bytes) == (
        T.TENSOR,
        (128,),
        "i1",
        "#blocked",
        128,
    )
    assert T.with_element(parse_type("i32"), "i1") == parse_type("i1")


@pytest.mark.parametrize(
    ("text", "memory"),
    [
        ("!ttg.memdesc<128x64xf16, #shared, #smem>", T.SHARED_MEMORY),
        ("!ttg.memdesc<128x64xf16, #shared, #smem, mutable>", T.SHARED_MEMORY),
        ("!ttg.memdesc<3x128x64xf16, #shared, #ttg.shared_memory, mutable, 3x128x64>", "shared"),
        ("!ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>", T.TENSOR_MEMORY),
        ("!ttg.memdesc<128x128xf32, #tmem, #tmem_space, mutable>", T.TENSOR_MEMORY),  # alias
    ],
)
def test_memdesc(text: str, memory: str) -> None:
    t = parse_type(text, ALIASES)
    assert t.kind == T.MEMDESC and t.memory == memory
    assert t.shape[-2:] in ((128, 64), (128, 128)) and t.element in ("f16", "f32")
    assert t.encoding in ("#shared", "#tmem")
    assert t.bytes == t.num_elements * t.element_bits // 8


def test_memdesc_alias_resolution_needs_the_aliases() -> None:
    text = "!ttg.memdesc<128x128xf32, #tmem, #tmem_space, mutable>"
    assert parse_type(text, ALIASES).memory == T.TENSOR_MEMORY
    assert parse_type(text).memory == T.SHARED_MEMORY  # unresolved: the default


@pytest.mark.parametrize(
    ("element", "bits"),
    [
        ("f8E4M3FN", 8),
        ("f8E5M2", 8),
        ("f8E4M3FNUZ", 8),
        ("f8E5M2FNUZ", 8),
        ("f4E2M1FN", 4),
        ("f16", 16),
        ("bf16", 16),
        ("tf32", 32),
        ("f32", 32),
        ("f64", 64),
        ("i1", 8),
        ("i8", 8),
        ("i32", 32),
        ("si32", 32),
        ("ui16", 16),
        ("i7", 7),
        ("index", 64),
        ("!tt.ptr<f16>", 64),
        ("!tt.ptr<f8E4M3FN>", 64),
        ("whatever", 0),
        ("i" + "9" * 5000, 0),  # no int() overflow
    ],
)
def test_element_bits(element: str, bits: int) -> None:
    assert T.element_bits(element) == bits


def test_fp8_tensor_bytes() -> None:
    t = parse_type("tensor<128x128xf8E4M3FN, #blocked>")
    assert (t.element, t.element_bits, t.bytes) == ("f8E4M3FN", 8, 128 * 128)
    m = parse_type("!ttg.memdesc<128x128xf8E4M3FN, #shared, #smem, mutable>", ALIASES)
    assert (m.kind, m.element_bits, m.bytes) == (T.MEMDESC, 8, 128 * 128)


@pytest.mark.parametrize("text", ["!ttg.async.token", "!ttng.async.token"])
def test_tokens(text: str) -> None:
    t = parse_type(text)
    assert t.kind == T.TOKEN and t.bytes == 0 and t.text == text


def test_tensor_descriptor() -> None:
    t = parse_type("!tt.tensordesc<tensor<128x64xf16, #shared>>")
    assert t.kind == T.DESCRIPTOR and t.bytes == 0


@pytest.mark.parametrize(
    ("text", "bits"),
    [("i1", 8), ("i32", 32), ("i64", 64), ("f16", 16), ("f32", 32), ("index", 64)]
    + [("!tt.ptr<f32>", 64), ("!tt.ptr<f16, 1>", 64), ("f8E4M3FN", 8), ("ui8", 8)],
)
def test_scalars(text: str, bits: int) -> None:
    t = parse_type(text)
    assert (t.kind, t.shape, t.element, t.element_bits) == (T.SCALAR, (), text, bits)
    assert t.bytes == bits // 8


@pytest.mark.parametrize(
    "text",
    ["", "none", "!foo.bar", "!foo.bar<1>", "()", "(i32) -> i32", "tensor<", "memref<4xf32>"]
    + ["vector<4xf32>", "#blocked", "!ttg.memdesc<", "i" + "9" * 5000],
)
def test_unknown_is_other(text: str) -> None:
    t = parse_type(text)
    assert t.kind == T.OTHER and t.bytes == 0


@pytest.mark.parametrize(
    "text",
    [
        "tensor<" + "9" * 5000 + "xf32>",
        "!ttg.memdesc<" + "9" * 5000 + "xf32, #shared, #smem>",
        "tensor<?x4xf32>",
        "tensor<4x?xf32, #blocked>",
        "tensor<,>",
        "tensor<x>",
        'tensor<"unterminated>',
    ],
)
def test_odd_shapes_never_raise(text: str) -> None:
    t = parse_type(text)
    assert t.text == text and t.bytes >= 0


def test_dynamic_dims() -> None:
    t = parse_type("tensor<?x4xf32>")
    assert t.shape == (-1, 4) and t.bytes == 0  # unknown size, not a negative one


def test_types_are_values() -> None:
    assert parse_type("tensor<4xf32, #b>") == parse_type("tensor<4xf32, #b>")
    assert hash(parse_type("i32")) == hash(parse_type("i32"))


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a, b", ["a", "b"]),
        ("", []),
        ("a,", ["a", ""]),
        ("tensor<4xf32, #b>, i32", ["tensor<4xf32, #b>", "i32"]),
        ('"x, y", z', ['"x, y"', "z"]),
        ('"a\\", b", c', ['"a\\", b"', "c"]),
        ("affine_map<(d0) -> (d0, 0)>, x", ["affine_map<(d0) -> (d0, 0)>", "x"]),
        ("{a = [1, 2]}, [3, {4, 5}]", ["{a = [1, 2]}", "[3, {4, 5}]"]),
    ],
)
def test_split_top_level(text: str, parts: list[str]) -> None:
    assert split_top_level(text) == parts

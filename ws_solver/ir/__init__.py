"""TTGIR text ⇄ Module: a lossless reader and attribute editor for Triton GPU IR.

Knows MLIR syntax and nothing about what partitions mean.
"""

from .attributes import Attribute, array_of, i32, i32_array
from .errors import EditError, ParseError
from .module import Block, Module, Op, Region, Use, Value, located_text
from .parser import parse
from .types import Type, parse_type

__all__ = [
    "Attribute",
    "Block",
    "EditError",
    "Module",
    "Op",
    "ParseError",
    "Region",
    "Type",
    "Use",
    "Value",
    "array_of",
    "i32",
    "i32_array",
    "located_text",
    "parse",
    "parse_type",
]

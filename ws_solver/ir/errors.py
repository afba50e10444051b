"""Errors raised by the TTGIR reader and editor."""

from __future__ import annotations


class ParseError(ValueError):
    """Malformed TTGIR text; carries the 1-based line and column of the problem."""

    def __init__(self, reason: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {reason}")
        self.reason = reason
        self.line = line
        self.column = column


class EditError(ValueError):
    """An edit the writer cannot express in the op's printed syntax."""

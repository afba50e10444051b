"""Counts in the words people read: "1 loop", "2 loops", never "1 loops" or "loop(s)"."""

from __future__ import annotations


def count(n: int | float, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, in the plural (`plural`, else `noun` + "s") unless `n` is 1."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"

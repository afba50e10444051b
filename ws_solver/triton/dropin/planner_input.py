"""The planner's input of one compile, parsed once.

The loops' sites for the report, what the check of the planner's output compares
(`partition_check.Given`) and whether the text has every op located are read off that one
parse, and each planning is lent the module (`lent`): planning annotates it in place, and
the attributes it set are taken off again when it returns, so that the next planning (the
decision check's other decision, a fallback strategy) starts from the input as parsed. A
planning that does not return (out of time, its thread left running) or that fails keeps
the module: a later one parses the text again. A text ws_solver's reader refuses is left to
each reader, which meets the error as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ... import ir
from . import records
from .partition_check import Given, check


class PlannerInput:
    """``text``: the planner's input; None: there is none (the compile did not get that far)."""

    def __init__(self, text: str | None) -> None:
        self.text = text or ""
        self.sites: list[dict] = []
        self.given: Given | None = None
        # Texts whose every op is located (`ir.located_text` leaves them as they are): their
        # lowering need not parse them for that (`LoweringJob.located`).
        self.located: set[str] = set()
        self._module: ir.Module | None = None
        self._attributes: list = []  # each op's attributes as parsed (ir edits never change them)
        if text is None:
            return
        try:
            module: ir.Module | None = ir.parse(text)
        except Exception:
            module = None
        self.sites = records.loop_sites(text, module)
        if module is None:
            return
        try:  # an error here is the check's own, met when it runs (in the attempt)
            self.given = Given.read(module)
            if ir.located_text(module) == text:
                self.located.add(text)
        except Exception:
            self.given = None
        self._attributes = [(op, op.attributes) for op in module.walk()]
        self._module = module

    @contextmanager
    def lent(self) -> Iterator[ir.Module | None]:
        """The parsed input for one planning (None: lent already or lost; parse the text),
        as parsed again once the planning returned."""
        module, self._module = self._module, None
        yield module
        if module is not None:
            for op, attributes in self._attributes:
                if op._edited:
                    op.attributes, op._edited = attributes, False
            self._module = module

    def check(self, returned: str, reports: Sequence = ()) -> list[bool]:
        """`partition_check.check_partitioned` of the planner's output against this input;
        an output found located joins `located`."""
        given = self.given if self.given is not None else Given.read(ir.parse(self.text))
        checked = check(given, returned, reports)
        if checked.located:
            self.located.add(returned)
        return checked.specialized

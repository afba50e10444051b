"""The error every command reports to the user as one line (see ``ws_solver.cli.common``):
the library's `ReportedError`, so that what the library raises is reported the same way."""

from __future__ import annotations

from ..core.failures import ReportedError as CliError

__all__ = ["CliError"]

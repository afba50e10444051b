"""The error every command reports to the user as one line (see ``ws_solver.cli.common``)."""

from __future__ import annotations


class CliError(Exception):
    """A failure reported to the user as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

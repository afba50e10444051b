"""Failures told to the user as one line, and the exit statuses they end a command with.

The library raises `ReportedError` for bad input (a file that does not read or parse, a loop
with no valid plan) and records its code in the documents it returns (`compare`'s failure
records); the `ws-solver` command prints its message and exits with its code
(`cli.errors.CliError` is this class).
"""

from __future__ import annotations

import errno

EXIT_OK = 0
EXIT_SOME_FAILED = 1  # commands over many inputs: some failed, the rest were done
EXIT_BAD_INPUT = 2  # unreadable, not TTGIR, truncated, no warp-specialized loop, usage
EXIT_INTERNAL = 3  # a bug (WS_SOLVER_DEBUG=1 shows the traceback)
EXIT_INFEASIBLE = 4  # a loop has no plan within the target's limits
EXIT_TIMEOUT = 5  # the solver's time ran out before it had any valid plan
EXIT_INTERRUPTED = 130


class ReportedError(Exception):
    """A failure reported to the user as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# OS errors that say the machine ran out of something, not that ws_solver has a bug.
_RESOURCE_ERRNOS = frozenset(
    {errno.ENOMEM, errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.EDQUOT}
)


def resource_failure(e: BaseException) -> ReportedError | None:
    """A ReportedError (exit 2) for running out of memory, disk, file descriptors or
    processes; None for anything else."""
    if isinstance(e, MemoryError):
        return ReportedError("out of memory (the input may be too large for this machine)")
    if isinstance(e, OSError) and e.errno in _RESOURCE_ERRNOS:
        return ReportedError(f"out of resources: {e.strerror or e}")
    return None


def internal_failure(place: object, e: BaseException) -> ReportedError:
    """What an unexpected exception at `place` becomes: a resource failure (exit 2), else an
    internal error (exit 3)."""
    failure = resource_failure(e)
    if failure is not None:
        return ReportedError(f"{place}: {failure.message}", failure.code)
    return ReportedError(f"{place}: internal error: {type(e).__name__}: {e}", EXIT_INTERNAL)

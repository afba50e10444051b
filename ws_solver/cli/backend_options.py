"""--backend, --ray-address and --jobs: where the commands that fan work out run it."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from ..backends import BACKENDS, RAY_EXTRA, Backend, BackendError, open_backend
from ..core.wording import count
from .common import EXIT_BAD_INPUT, CliError, positive_int, report

BACKEND_HELP = f"""\
backends:
  local  N processes on this machine (--jobs N, default 1: in this process)
  ray    Ray tasks: on the cluster at --ray-address ADDR (or $RAY_ADDRESS; `ray start
         --head` prints it), else on a private local Ray instance with --jobs CPUs (default:
         all). --jobs caps the tasks in flight. Needs the extra: {RAY_EXTRA}
  Results are the same on both, for any --jobs; failed tasks are retried (at most
  --retries more times) and a loop that still fails is reported as failed."""


def add_backend_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--jobs, --backend, --ray-address and --retries; `what`: what one task is."""
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"{what} run at once (default: 1 locally, the cluster's CPUs on ray)",
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default="local", help="where they run (default: local)"
    )
    parser.add_argument(
        "--ray-address", metavar="ADDR", help="the Ray cluster to use (with --backend ray)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        choices=range(0, 11),
        metavar="N",
        help="retries of a task whose worker died or that raised (0-10, default: 2)",
    )


@contextlib.contextmanager
def backend_from_args(args: argparse.Namespace, ship: tuple[Any, ...] = ()) -> Iterator[Backend]:
    """The backend the arguments ask for (local with 1 job when a command has no such
    arguments); a backend that cannot be used is a one-line CliError (exit 2)."""
    name = getattr(args, "backend", "local")
    address = getattr(args, "ray_address", None)
    if address and name != "ray":
        raise CliError("--ray-address needs --backend ray", EXIT_BAD_INPUT)
    try:
        with open_backend(name, getattr(args, "jobs", None), address, ship) as backend:
            _say_when_capped(args, backend)
            yield backend
    except BackendError as e:
        raise CliError(str(e), EXIT_BAD_INPUT) from None


def _say_when_capped(args: argparse.Namespace, backend: Backend) -> None:
    """The local backend runs at most one process per usable core: say so when --jobs asked
    for more, and record what runs."""
    requested = getattr(backend, "requested", None)
    if requested is not None and backend.jobs < requested:
        report(f"--jobs {requested}: capped at the {count(backend.jobs, 'usable CPU core')}")
        args.jobs = backend.jobs


def shipped() -> tuple[Any, ...]:
    """What a command ships to the backend's workers: this `ws_solver`."""
    import ws_solver

    return (ws_solver,)

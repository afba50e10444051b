"""The Ray backend: each task a Ray task (`num_cpus`, `num_gpus` as asked), on the cluster at
an address, or on a private local Ray instance started for the run (whose processes a
`reaper` ends should this process be killed).

Ray's own retries are off (`max_retries=0`): `Backend.map` retries, the same way as the local
backend, so that a task's attempts and last reason are known and reported."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from . import reaper
from .base import RAY_EXTRA, Backend, BackendError, one_line, run_one

# Passed on to the workers when set, so that they share the driver's plan cache folder
# (a shared file system makes the cache one for the whole cluster).
FORWARDED_ENV = ("WS_SOLVER_CACHE_DIR",)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BackendError(f"--backend ray needs Ray, an optional extra: {RAY_EXTRA}") from None
    return ray


class RayBackend(Backend):
    """Runs tasks on Ray. Connects to `address` (or $RAY_ADDRESS) with `ship` sent as the
    job's code; without an address starts a private local instance with `jobs` CPUs. A Ray
    connection already made in this process (ray.init by the caller) is used as it is."""

    name = "ray"

    def __init__(
        self, jobs: int | None = None, address: str | None = None, ship: tuple = ()
    ) -> None:
        super().__init__()
        self.ray = ray = import_ray()
        self.jobs = jobs
        self.owned = False
        self.remotes: dict[tuple[float, float], Any] = {}
        self.reaper = None
        if ray.is_initialized():
            return
        address = address or os.environ.get("RAY_ADDRESS") or None
        quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
        try:
            if address:
                ray.init(address=address, runtime_env=_job_env(ship, upload=True), **quiet)
            else:
                # Ends what the instance leaves behind should this process be killed.
                self.reaper = reaper.start(os.getpid())
                ray.init(
                    address="local",
                    num_cpus=jobs or os.cpu_count() or 1,
                    include_dashboard=False,
                    runtime_env=_job_env(ship, upload=False),
                    **quiet,
                )
        except Exception as e:
            reaper.stop(self.reaper)
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise BackendError(f"cannot start or reach {where}: {one_line(e)}") from None
        self.owned = True

    def slots(self, cpus: float, gpus: float) -> int:
        """`jobs` when given, else as many tasks as the cluster runs at once."""
        have = self.ray.cluster_resources()
        if gpus and have.get("GPU", 0) < gpus:
            raise BackendError(
                f"the Ray cluster has {have.get('GPU', 0):g} GPU(s); tasks ask for {gpus:g}"
            )
        if self.jobs:
            return self.jobs
        if gpus:
            return int(have["GPU"] // gpus)
        return max(1, int(have.get("CPU", 1) // max(cpus, 1e-9)))

    def submit(self, fn, item, cpus: float, gpus: float):
        remote = self.remotes.get((cpus, gpus))
        if remote is None:
            remote = self.ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(run_one)
            self.remotes[(cpus, gpus)] = remote
        return remote.remote(fn, item)

    def wait(self, handles: list, timeout: float | None = None) -> list[tuple[Any, bool, Any]]:
        ray = self.ray
        ready, _ = ray.wait(handles, num_returns=1, timeout=timeout)
        more, _ = ray.wait(handles, num_returns=len(handles), timeout=0)
        out = []
        for ref in dict.fromkeys([*ready, *more]):
            try:
                out.append((ref, True, ray.get(ref)))
            except ray.exceptions.RayTaskError as e:
                cause = getattr(e, "cause", None)
                out.append((ref, False, one_line(cause) if cause is not None else one_line(e)))
            except ray.exceptions.RayError as e:  # the worker died, was killed, ran out of memory
                out.append((ref, False, f"worker died ({one_line(e)})"))
        return out

    def cancel(self, handles: list) -> None:
        """Leave the tasks to Ray: a job's tasks end when its driver disconnects (`close`, for
        an instance this backend started). Cancelling them one by one raced Ray's own
        bookkeeping: with ray 2.60 a cancelled task's late reply made the core worker abort
        the process ("Tried to complete task that was not pending"), exit status 1 instead
        of an interrupted run's 130 (tests/test_ray_backend.py, in CI). In a Ray session the
        caller started, the tasks run to their end and their results are dropped."""

    def close(self) -> None:
        if self.owned:
            self.ray.shutdown()
            self.owned = False
        reaper.stop(self.reaper)
        self.reaper = None


def _job_env(ship: tuple, upload: bool) -> dict:
    """The job's runtime environment: the shipped modules (uploaded to a cluster, or on the
    workers' PYTHONPATH for a local instance) and the forwarded variables."""
    env = {k: os.environ[k] for k in FORWARDED_ENV if os.environ.get(k)}
    modules = [m for m in ship if isinstance(m, ModuleType)]
    if upload:
        out: dict = {"env_vars": env} if env else {}
        if modules:
            out["py_modules"] = modules
        return out
    roots = [str(Path(m.__file__).resolve().parent.parent) for m in modules if m.__file__]
    inherited = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    path = [*dict.fromkeys(roots), *filter(None, inherited)]
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return {"env_vars": env} if env else {}

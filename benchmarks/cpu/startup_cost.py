"""What ``ws_solver_autoload.pth`` costs at start-up (issue 37): the wall time of fresh
interpreters running ``pass``, ``import triton`` and (where installed) ``import torch``, in a
throwaway virtual environment that sees this interpreter's packages, with and without the
``.pth`` installed in its site-packages, and with it installed and ``$WS_SOLVER`` set.

    python -m benchmarks.cpu.startup_cost --n 100 --out benchmarks/results/<run>/

Conditions, all in one venv, run round-robin in a shuffled order each round so that a
machine's load drifts over all of them alike:

- ``without``: no ws_solver .pth in the venv's site-packages (ws_solver importable, never
  imported);
- ``without again``: the same, measured as a condition of its own: its change from
  ``without`` is the noise floor of the method on this machine;
- ``installed``: ``ws_solver_autoload.pth`` in the site-packages, as ``pip install`` leaves
  it (renamed in before the sample, out after); ``$WS_SOLVER`` unset: the target is < 1%
  over ``without``;
- ``installed+set``: ``WS_SOLVER=optimal``: ``pass`` loads the watcher only; ``import
  triton`` also switches the drop-in on (the price of asking for it, paid once per process).

Each sample is one ``subprocess.run`` of ``python -c PROGRAM`` timed from outside (start-up,
the program and exit, as a user's process pays them). Reported per condition: the median, the
interquartile range, and the median's change from ``without`` with a 95% bootstrap interval.
Writes ``startup.json`` (every sample) and ``results.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PTH = ROOT / "ws_solver_autoload.pth"
CONDITIONS = ("without", "without again", "installed", "installed+set")
PROGRAMS = {"pass": "pass", "import triton": "import triton", "import torch": "import torch"}
BOOTSTRAP = 2000


@dataclass(frozen=True)
class Row:
    program: str
    condition: str
    n: int
    median_ms: float
    q1_ms: float
    q3_ms: float
    change_pct: float | None  # the median's change from "without"
    change_low_pct: float | None  # 95% bootstrap interval of that change
    change_high_pct: float | None


def make_venv(folder: Path) -> tuple[Path, Path]:
    """A venv (no pip) whose site-packages points at this interpreter's packages and at the
    repository: (its python, where ws_solver_autoload.pth goes in its site-packages)."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    paths = [str(ROOT), *_site_dirs()]
    Path(purelib, "_bench_paths.pth").write_text("\n".join(paths) + "\n")
    return python, Path(purelib, PTH.name)


class Installed:
    """The venv's ws_solver .pth, put in place or taken away (a rename) between samples."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.parked = target.with_name(target.name + ".off")
        shutil.copyfile(PTH, self.parked)

    def set(self, installed: bool) -> None:
        if installed and self.parked.exists():
            self.parked.rename(self.target)
        elif not installed and self.target.exists():
            self.target.rename(self.parked)


def _site_dirs() -> list[str]:
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [d for d in dirs if os.path.isdir(d)]


def pth_cost_us(repeats: int = 20000) -> float:
    """Microseconds ``site`` spends on the installed .pth with $WS_SOLVER unset (open, read and
    run its line: ``site.addpackage``), timed in this process: what the wall times above cannot
    resolve under a machine's noise."""
    env_value = os.environ.pop("WS_SOLVER", None)
    try:
        with tempfile.TemporaryDirectory() as folder:
            shutil.copyfile(PTH, Path(folder, PTH.name))
            start = time.perf_counter()
            for _ in range(repeats):
                site.addpackage(folder, PTH.name, set())
            return 1e6 * (time.perf_counter() - start) / repeats
    finally:
        if env_value is not None:
            os.environ["WS_SOLVER"] = env_value


def check_switch(python: Path, pth: Installed, set_value: str) -> None:
    """The conditions are what they say: with WS_SOLVER set, the .pth loads the watcher when
    it is in place and nothing when it is not (RuntimeError otherwise)."""
    env = environments(set_value)["installed+set"]
    code = "import sys; print('ws_solver.autoload' in sys.modules)"
    for installed in (True, False):
        pth.set(installed)
        out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
        if out.stdout.strip() != str(installed):
            raise RuntimeError(f"the .pth {'in place' if installed else 'away'}: {out}")


def available(python: Path, program: str, env: dict[str, str]) -> bool:
    return subprocess.run([python, "-c", program], env=env, capture_output=True).returncode == 0


def sample(python: Path, program: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", program], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def environments(set_value: str) -> dict[str, dict[str, str]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("WS_SOLVER")}
    return {
        "without": base,
        "without again": base,
        "installed": base,
        "installed+set": {**base, "WS_SOLVER": set_value},
    }


def measure(
    python: Path, pth: Installed, programs: list[str], n: int, set_value: str, seed: int
) -> dict[str, dict[str, list[float]]]:
    """samples[program][condition]: n wall times (s), round-robin in shuffled order."""
    envs = environments(set_value)
    rng = random.Random(seed)
    samples: dict[str, dict[str, list[float]]] = {p: {c: [] for c in CONDITIONS} for p in programs}
    jobs = [(p, c) for p in programs for c in CONDITIONS]

    def run(p: str, c: str) -> float:
        pth.set(c.startswith("installed"))
        return sample(python, PROGRAMS[p], envs[c])

    for p, c in jobs:  # warm the page cache and the bytecode caches once, unmeasured
        run(p, c)
    for _ in range(n):
        rng.shuffle(jobs)
        for p, c in jobs:
            samples[p][c].append(run(p, c))
    pth.set(False)
    return samples


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def change_interval(base: list[float], other: list[float], seed: int) -> tuple[float, float, float]:
    """The median's change (%) and its 95% bootstrap interval (resampling both groups)."""
    rng = random.Random(seed)
    point = 100 * (statistics.median(other) / statistics.median(base) - 1)
    changes = sorted(
        100
        * (
            statistics.median(rng.choices(other, k=len(other)))
            / statistics.median(rng.choices(base, k=len(base)))
            - 1
        )
        for _ in range(BOOTSTRAP)
    )
    return point, changes[int(0.025 * BOOTSTRAP)], changes[int(0.975 * BOOTSTRAP) - 1]


def rows(samples: dict[str, dict[str, list[float]]], seed: int) -> list[Row]:
    out = []
    for program, by_condition in samples.items():
        base = by_condition["without"]
        for condition, values in by_condition.items():
            q1, median, q3 = quartiles(values)
            change = (None, None, None)
            if condition != "without":
                change = change_interval(base, values, seed)
            out.append(Row(program, condition, len(values), 1e3 * median, 1e3 * q1, 1e3 * q3,
                           *change))  # fmt: skip
    return out


def markdown(table: list[Row], meta: dict) -> str:
    lines = [
        f"python {meta['python']} ({meta['executable']}), {meta['machine']}, "
        f"load average at start {meta['load_start']}, at end {meta['load_end']}; "
        f"n = {meta['n']} per cell; WS_SOLVER={meta['set_value']} in installed+set",
        "",
        f"In this process, `site.addpackage` of the installed .pth with WS_SOLVER unset (what "
        f"site does with it at start-up) takes {meta['pth_us']} µs (mean of 20000): "
        f"{meta['pth_pct_of_pass']}% of the median `pass` without it.",
        "",
        "| program | condition | n | median ms | IQR ms | median change vs without (95% CI) |",
        "|---|---|---|---|---|---|",
    ]
    for r in table:
        change = (
            "—"
            if r.change_pct is None
            else f"{r.change_pct:+.1f}% ({r.change_low_pct:+.1f}% … {r.change_high_pct:+.1f}%)"
        )
        lines.append(
            f"| `{r.program}` | {r.condition} | {r.n} | {r.median_ms:.1f} | "
            f"{r.q1_ms:.1f}–{r.q3_ms:.1f} | {change} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="samples per program and condition")
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    parser.add_argument("--set-value", default="optimal", help="WS_SOLVER in installed+set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--programs", nargs="*", default=list(PROGRAMS), choices=list(PROGRAMS),
        help="what each interpreter runs (those not importable here are left out)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ws_startup_") as tmp:
        python, target = make_venv(Path(tmp, "venv"))
        pth = Installed(target)
        check_switch(python, pth, args.set_value)
        base_env = environments(args.set_value)["without"]
        programs = [p for p in args.programs if available(python, PROGRAMS[p], base_env)]
        skipped = sorted(set(args.programs) - set(programs))
        load_start = os.getloadavg()
        samples = measure(python, pth, programs, args.n, args.set_value, args.seed)
        load_end = os.getloadavg()
    table = rows(samples, args.seed)
    pth_us = pth_cost_us()
    bare_pass = statistics.median(samples["pass"]["without"]) if "pass" in samples else None
    meta = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "load_start": [round(x, 2) for x in load_start],
        "load_end": [round(x, 2) for x in load_end],
        "n": args.n,
        "set_value": args.set_value,
        "pth_us": round(pth_us, 1),
        "pth_pct_of_pass": round(100 * pth_us * 1e-6 / bare_pass, 2) if bare_pass else None,
        "not_importable": skipped,
    }
    data = {"meta": meta, "rows": [asdict(r) for r in table], "samples_s": samples}
    (args.out / "startup.json").write_text(json.dumps(data, indent=1) + "\n")
    (args.out / "results.md").write_text(markdown(table, meta))
    print(markdown(table, meta), end="")
    if skipped:
        print(f"not importable here, not measured: {', '.join(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

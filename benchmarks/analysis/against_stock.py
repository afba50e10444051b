"""ws_solver against stock Triton, as issue 22 measures it: stock's time over a strategy's,
per config that both compiled, verified and timed in the same run, and the geomean.

Configs where the strategy builds stock's own cubin count as 1 (the bench times a shared
cubin once); the geomean over the configs whose cubins differ is given beside it. Over
several runs (`python -m benchmarks.analysis.against_stock A/results.json B/results.json ...`) each
run's geomean is one value: the runs are not pooled.

A run that timed only the configs whose cubins differ gives the corpus figure with
`--over N`: the N configs stock compiles, those not timed counting 1 (check that they build
stock's cubin with `bench_kernels --dry-run`). `--by-gpu` groups the runs by the GPU each
ran on (the serial number the bench records) and gives each GPU's median and the 95%
interval of their mean: runs on one GPU are not independent samples of H200s.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.bench_strategies import status_of
from benchmarks.common.stats import mean_interval

STOCK = "builtin"
DEFAULT_STRATEGY = "optimal"


@dataclass(frozen=True)
class ConfigRatio:
    kernel: str
    config: str
    ratio: float  # stock ms / strategy ms (> 1: the strategy is faster)
    same_binary: bool | None  # None: a side has no cubin digest (runs before they were kept)


@dataclass(frozen=True)
class AgainstStock:
    strategy: str
    configs: tuple[ConfigRatio, ...]

    @property
    def geomean(self) -> float | None:
        return geomean(c.ratio for c in self.configs)

    @property
    def differing(self) -> tuple[ConfigRatio, ...]:
        return tuple(c for c in self.configs if c.same_binary is False)

    @property
    def digests_known(self) -> bool:
        return all(c.same_binary is not None for c in self.configs)

    @property
    def geomean_differing(self) -> float | None:
        return geomean(c.ratio for c in self.differing)

    @property
    def slowest(self) -> ConfigRatio | None:
        return min(self.configs, key=lambda c: c.ratio, default=None)

    def geomean_over(self, configs: int) -> float | None:
        """The geomean over `configs` configs, those not timed here counting 1."""
        if configs < len(self.configs):
            raise ValueError(f"{len(self.configs)} configs timed, more than the {configs} asked")
        timed = self.geomean
        return None if timed is None else timed ** (len(self.configs) / configs)


def geomean(values: Iterable[float]) -> float | None:
    logs = [math.log(v) for v in values]
    return math.exp(sum(logs) / len(logs)) if logs else None


def _timed(row: dict, ok: Callable[[dict], bool]) -> bool:
    return ok(row) and "ms" in (row.get("bench") or {})


def against_stock(
    results: list[dict], ok: Callable[[dict], bool], strategy: str = DEFAULT_STRATEGY
) -> AgainstStock:
    """Per config with a verified, timed row of both `strategy` and stock: their ratio."""
    rows = {(r["kernel"], r["config"], r["strategy"]): r for r in results}
    configs = []
    for (kernel, config, name), row in rows.items():
        stock = rows.get((kernel, config, STOCK))
        if name != strategy or stock is None or not (_timed(row, ok) and _timed(stock, ok)):
            continue
        digests = [(r.get("compile") or {}).get("binary") for r in (row, stock)]
        same = None if None in digests else digests[0] == digests[1]
        ratio = stock["bench"]["ms"] / row["bench"]["ms"]
        configs.append(ConfigRatio(kernel, config, ratio, same))
    return AgainstStock(strategy, tuple(sorted(configs, key=lambda c: (c.kernel, c.config))))


def summary_line(result: AgainstStock) -> str:
    """One line: the geomean over the configs, over the differing ones, and the slowest."""
    slowest = result.slowest
    if slowest is None:
        return f"`{result.strategy}`: no config timed beside stock"
    name, n = result.strategy, len(result.configs)
    return (
        f"`{name}`: stock / `{name}` geomean **{result.geomean:.4f}** over {n} configs; "
        f"{_differing(result)}; lowest {slowest.ratio:.3f} ({slowest.kernel} {slowest.config})"
    )


def _differing(result: AgainstStock) -> str:
    if not result.digests_known:
        return "cubin digests not recorded"
    differing = result.geomean_differing
    if differing is None:
        return "every cubin is stock's"
    return f"{differing:.4f} over the {len(result.differing)} whose cubins differ"


def markdown_section(results: list[dict], ok: Callable[[dict], bool]) -> list[str]:
    """`## Against stock Triton` for each ws_solver strategy timed beside stock (or nothing)."""
    if not any(r["strategy"] == STOCK for r in results):
        return []
    names = sorted({r["strategy"] for r in results} - {STOCK})
    found = [against_stock(results, ok, name) for name in names]
    found = [f for f in found if f.configs]
    if not found:
        return []
    return [
        "",
        "## Against stock Triton (stock ms / strategy ms, same run; geomean over configs)",
        "",
        *(f"- {summary_line(f)}" for f in found),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.analysis.against_stock",
        description="Stock Triton's time over a strategy's, geomean over the configs of each "
        "bench_kernels results.json, and the spread over the runs given.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="bench_kernels results.json files")
    parser.add_argument("--strategy", default=DEFAULT_STRATEGY)
    parser.add_argument(
        "--over",
        type=int,
        metavar="N",
        help="the geomean over N configs, those not timed counting 1 (a run of only the configs "
        "whose cubins differ; 16 for the sm_90 corpus under Triton 3.9)",
    )
    parser.add_argument(
        "--by-gpu",
        action="store_true",
        help="group the runs by GPU serial: each GPU's median, and the 95%% interval of their mean",
    )
    args = parser.parse_args(argv)
    values: dict[Path, float] = {}
    gpus: dict[Path, str | None] = {}
    for path in args.results:
        try:
            data = json.loads(path.read_text())
            found = against_stock(data["results"], lambda r: status_of(r) == "ok", args.strategy)
        except (OSError, ValueError, KeyError) as e:
            print(f"against_stock: {path}: not a bench_kernels results.json ({e})", file=sys.stderr)
            return 2
        try:
            value = found.geomean if args.over is None else found.geomean_over(args.over)
        except ValueError as e:
            print(f"against_stock: {path}: {e}", file=sys.stderr)
            return 2
        over = "" if args.over is None or value is None else f"; over {args.over}: {value:.4f}"
        print(f"{path}: {summary_line(found)}{over}")
        if value is not None:
            values[path] = value
            gpus[path] = (data.get("environment") or {}).get("gpu_serial")
    if len(values) > 1:
        print(_spread(f"{len(values)} runs", list(values.values())))
    if args.by_gpu:
        unnamed = [str(p) for p, gpu in gpus.items() if not gpu]
        if unnamed:
            print(f"against_stock: {unnamed[0]}: the run does not name its GPU", file=sys.stderr)
            return 2
        return _by_gpu(values, gpus)
    return 0


def _spread(label: str, values: list[float]) -> str:
    return f"{label}: {min(values):.4f}-{max(values):.4f}, median {statistics.median(values):.4f}"


def _by_gpu(values: dict[Path, float], gpus: dict[Path, str | None]) -> int:
    """Each GPU's runs, then the interval of the mean of the GPU medians."""
    by_gpu: dict[str, list[float]] = {}
    for path, value in values.items():
        by_gpu.setdefault(str(gpus[path]), []).append(value)
    for gpu, found in sorted(by_gpu.items()):
        print(_spread(f"GPU {gpu}, {len(found)} runs", found))
    interval = mean_interval([statistics.median(v) for v in by_gpu.values()])
    if interval is None:
        print("one GPU: no interval over GPUs")
    else:
        mean, low, high = interval
        print(f"{len(by_gpu)} GPUs: mean of medians {mean:.4f}, 95% interval {low:.4f}-{high:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

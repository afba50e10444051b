"""Which configurations bench_measured times, chosen before any timing: a fixed rule over the
committed config space (corpus/configspace/index.json), written to ``measured_space.json``.

The rule (``select``): every family of ``corpus.configspace.FAMILIES``; in each, every k-th
configuration in the index's order, k = ceil(n / PER_FAMILY), so that each family gets about
PER_FAMILY; then, in each GEMM family, each of issue 48's tile classes (``CLASSES``: 4-warp
128x256 and 4-warp 128x128) topped up to MIN_PER_CLASS with the class's configurations at
evenly spaced places in the index's order. The list is interleaved across families
(``corpus.configspace.interleaved``), so that any contiguous chunk (``part``) holds every
family and a similar amount of work. No torch, no Triton: CPU tests import it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

SPACE_FILE = Path(__file__).resolve().parent / "measured_space.json"
PER_FAMILY = 14  # the stride's target per family: 12 families x ~13 >= 150
MIN_PER_CLASS = 2


def _tile(bm: int, bn: int, warps: int) -> Callable[[dict], bool]:
    def matches(config: dict) -> bool:
        return (
            "BLOCK_K" in config  # a GEMM
            and config["BLOCK_M"] == bm
            and config["BLOCK_N"] == bn
            and config["num_warps"] == warps
        )

    return matches


# Issue 48's interesting GEMM tiles: stock splits a 4-warp 128x256 tile between two consumer
# warp groups (ours spilled, 7x slower); 4-warp 128x128 is where specializing or not is
# decided by timing only.
CLASSES: dict[str, Callable[[dict], bool]] = {
    "w4_128x256": _tile(128, 256, 4),
    "w4_128x128": _tile(128, 128, 4),
}


def index_configs(path: Path | None = None) -> list[dict]:
    """The committed config space's entries ({family, name, config, smem_estimate}), in order."""
    from corpus import configspace

    return json.loads((path or configspace.INDEX_FILE).read_text())["configs"]


def spread(items: list, count: int) -> list:
    """`count` items at evenly spaced places (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def select(
    configs: list[dict], per_family: int = PER_FAMILY, min_per_class: int = MIN_PER_CLASS
) -> list[dict]:
    """The configurations to time (module docstring), interleaved across families."""
    from corpus import configspace

    by_family: dict[str, list[dict]] = {}
    for c in configs:
        by_family.setdefault(c["family"], []).append(c)
    chosen: list[configspace.Entry] = []
    for family in configspace.FAMILIES:
        rows = by_family.get(family, [])
        step = max(1, math.ceil(len(rows) / per_family))
        picked = {r["name"] for r in rows[::step]}
        for matches in CLASSES.values():
            members = [r["name"] for r in rows if matches(r["config"])]
            have = [n for n in members if n in picked]
            if len(have) < min_per_class:
                rest = [n for n in members if n not in picked]
                picked.update(spread(rest, min_per_class - len(have)))
        chosen += [configspace.Entry(**r) for r in rows if r["name"] in picked]
    return [asdict(e) for e in configspace.interleaved(chosen)]


def counts(rows: list[dict]) -> dict[str, int]:
    """Configurations per family, in FAMILIES order (others after)."""
    from corpus import configspace

    out = {f: 0 for f in configspace.FAMILIES}
    for r in rows:
        out[r.get("family", "?")] = out.get(r.get("family", "?"), 0) + 1
    return {f: n for f, n in out.items() if n}


def class_counts(rows: list[dict]) -> dict[str, int]:
    """Configurations of each of CLASSES."""
    return {name: sum(1 for r in rows if m(r["config"])) for name, m in CLASSES.items()}


def document(rows: list[dict], per_family: int, min_per_class: int) -> dict:
    """The selection as committed: the rule, its parameters, counts and the configurations."""
    return {
        "rule": (
            f"per family of corpus.configspace.FAMILIES, every k-th configuration of "
            f"corpus/configspace/index.json in its order, k = ceil(n / {per_family}); in each "
            f"GEMM family each class of {sorted(CLASSES)} topped up to {min_per_class} at evenly "
            "spaced places; interleaved across families (benchmarks/gpu/measured_space.py)"
        ),
        "per_family": per_family,
        "min_per_class": min_per_class,
        "total": len(rows),
        "counts": counts(rows),
        "classes": class_counts(rows),
        "configs": rows,
    }


def write(path: Path, per_family: int = PER_FAMILY, min_per_class: int = MIN_PER_CLASS) -> dict:
    """Select from the committed index and write the selection's document to `path`."""
    doc = document(select(index_configs(), per_family, min_per_class), per_family, min_per_class)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return doc


def load(path: Path) -> list[dict]:
    """The configurations of a selection file."""
    return json.loads(path.read_text())["configs"]


def parse_part(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N), 1 <= K <= N; ValueError otherwise."""
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(f"--part {text!r}: expected K/N, e.g. 2/4")
    part, parts = int(k), int(n)
    if not 1 <= part <= parts:
        raise ValueError(f"--part {text!r}: K must be 1..N")
    return part, parts


def part(rows: list, k: int, n: int) -> list:
    """The k-th (1-based) of n contiguous chunks whose sizes differ by at most one."""
    return rows[(k - 1) * len(rows) // n : k * len(rows) // n]


def part_suffix(k: int, n: int) -> str:
    """The file-name part of a chunk's outputs ('' for the whole)."""
    return "" if n == 1 else f"-part{k}of{n}"


# -- issue 48's first sweep (one family, by hand): kept so that its recorded run still runs ---
LEGACY_SMEM_LIMIT = 227 * 1024


def legacy_sweep(family: str) -> list[dict]:
    """The issue's matmul sweep: BLOCK_N 128/256, BLOCK_K 64/128, 2/3 stages, 4/8 warps,
    fp16/fp8, BLOCK_M 128; tiles that do not fit shared memory dropped (M = N = 8192,
    K = 4096: bench_measured's legacy inputs)."""
    out = []
    for dtype in ("fp16", "fp8"):
        size = 2 if dtype == "fp16" else 1
        for bn in (128, 256):
            for bk in (64, 128):
                for stages in (2, 3):
                    for warps in (4, 8):
                        smem = stages * (128 * bk + bn * bk) * size + 128 * bn * 2
                        if smem > LEGACY_SMEM_LIMIT:
                            continue
                        config = dict(
                            BLOCK_M=128,
                            BLOCK_N=bn,
                            BLOCK_K=bk,
                            GROUP_M=8,
                            num_warps=warps,
                            num_stages=stages,
                        )
                        name = f"{dtype}_t128x{bn}x{bk}_w{warps}_s{stages}"
                        out.append(
                            {"family": family, "name": name, "dtype": dtype, "config": config}
                        )
    return out

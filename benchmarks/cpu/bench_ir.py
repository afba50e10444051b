"""Time the TTGIR reader and printer on the corpus.

    python -m benchmarks.cpu.bench_ir [-n 5] [FILE ...]

Parses and prints every file N times and reports the median times per file and their total.
The goal is well under a second for the whole corpus on one core.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from ws_solver import ir

REPO_ROOT = Path(__file__).resolve().parents[2]

CORPUS = REPO_ROOT / "corpus" / "ttgir"
TARGET_S = 1.0


def bench_file(path: Path, repeat: int) -> tuple[int, int, float, float, float]:
    """(bytes, ops, median parse s, median print s, median CPU s of parse + print)."""
    text = path.read_text()
    parse_s, print_s, cpu_s = [], [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        module = ir.parse(text)
        t1 = time.perf_counter()
        printed = module.print()
        t2, c2 = time.perf_counter(), time.process_time()
        parse_s.append(t1 - t0)
        print_s.append(t2 - t1)
        cpu_s.append(c2 - c0)
    if printed != text:
        raise SystemExit(f"{path}: printing did not reproduce the file")
    ops = sum(1 for _ in module.walk())
    medians = (statistics.median(x) for x in (parse_s, print_s, cpu_s))
    return (len(text.encode()), ops, *medians)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--repeat", type=int, default=5, help="runs per file (default 5)")
    parser.add_argument("files", nargs="*", type=Path, help="TTGIR files (default: the corpus)")
    args = parser.parse_args(argv)
    files = args.files or sorted(CORPUS.glob("*.ttgir"))
    if not files:
        print(f"no TTGIR files in {CORPUS}", file=sys.stderr)
        return 1
    width = max(len(p.name) for p in files)
    header = f"{'file':<{width}}  {'bytes':>8}  {'ops':>6}  {'parse ms':>9}  {'print ms':>9}"
    print(header)
    print("-" * len(header))
    total_bytes = total_ops = 0
    total_parse = total_print = total_cpu = 0.0
    for path in files:
        size, ops, parse_s, print_s, cpu_s = bench_file(path, args.repeat)
        total_cpu += cpu_s
        total_bytes += size
        total_ops += ops
        total_parse += parse_s
        total_print += print_s
        row = f"{path.name:<{width}}  {size:>8}  {ops:>6}"
        print(f"{row}  {parse_s * 1e3:>9.2f}  {print_s * 1e3:>9.2f}")
    print("-" * len(header))
    print(
        f"{f'total ({len(files)} files)':<{width}}  {total_bytes:>8}  {total_ops:>6}  "
        f"{total_parse * 1e3:>9.2f}  {total_print * 1e3:>9.2f}"
    )
    total = total_parse + total_print
    rate = total_bytes / total / 1e6 if total else float("inf")
    verdict = "within" if total < TARGET_S else "OVER"
    print(
        f"\nparse + print, whole corpus: {total * 1e3:.1f} ms ({rate:.1f} MB/s), "
        f"{verdict} the {TARGET_S:.0f} s target (median of {args.repeat} runs per file); "
        f"CPU time {total_cpu * 1e3:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Summarize an Nsight Compute source page (``ncu --page source --print-source sass``): where
the warps of one kernel spend their time, instruction by instruction.

    python3 -m benchmarks.analysis.ncu_source_summary ncu_<config>_<strategy>_sass.txt[.gz] \
        [--top 25]

``profile_gpu.sh`` writes these files when run with ``NCU_SOURCE=1``. The page is a
fixed-width table; its columns are located from the dashed rule above the header. Printed:
the instructions holding the most warp samples with their three main stall reasons, the
samples between consecutive control instructions (wgmma issue and waits, barriers, TMA,
branches) so a loop body reads as a sequence of phases, and the samples per stall reason.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# Instructions that separate the phases of a pipelined loop body.
CONTROL = re.compile(r"HGMMA|WARPGROUP|BAR\.|SYNCS|UTMALDG|UTMASTG|BRA\b|EXIT")


@dataclass
class Row:
    index: int
    sass: str
    samples: int
    stalls: dict[str, int]


def _columns(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def _header_names(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """Column titles: the header wraps each title over several lines within its column."""
    names = []
    for start, end in spans:
        parts = [line[start : end + 1].strip() for line in lines if len(line) > start]
        names.append("".join(p for p in parts if p))
    return names


def parse(text: str) -> list[Row]:
    """The instruction rows of the first kernel on the page."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if re.match(r"^-{10,} -", line)]
    if not rules:
        raise ValueError("no source table found (was ncu run with --page source?)")
    rule = rules[-1]
    spans = _columns(lines[rule])
    header = []
    for line in lines[rule + 1 :]:
        if line.startswith("0x"):
            break
        header.append(line)
    names = _header_names(header, spans)
    try:
        sampled = next(i for i, n in enumerate(names) if n.startswith("Warp Stall Sampling (All"))
    except StopIteration:
        raise ValueError("no 'Warp Stall Sampling (All Samples)' column") from None
    stall_columns = [
        (i, n.removeprefix("stall_"))
        for i, n in enumerate(names)
        if n.startswith("stall_") and "Not Issued" not in n and "NotIssued" not in n
    ]
    rows = []
    for line in lines[rule + 1 :]:
        if not line.startswith("0x"):
            continue
        cells = [line[s : e + 1].strip() for s, e in spans]
        stalls = {name: int(cells[i]) for i, name in stall_columns if cells[i].isdigit()}
        samples = int(cells[sampled]) if cells[sampled].isdigit() else 0
        rows.append(Row(len(rows), cells[1], samples, stalls))
    return rows


def _line(row: Row, total: int, span: str) -> str:
    share = 100 * row.samples / total
    return f"  {span:11s} {share:5.1f}%  {row.sass[:60]:60s} {_reasons(row)}"


def _reasons(row: Row, count: int = 3) -> str:
    top = sorted(row.stalls.items(), key=lambda kv: -kv[1])[:count]
    return ", ".join(f"{name} {value}" for name, value in top if value)


def summary(rows: list[Row], top: int = 25) -> str:
    total = sum(r.samples for r in rows) or 1
    out = [f"{len(rows)} instructions, {total} warp samples", "", "hottest instructions:"]
    for row in sorted(sorted(rows, key=lambda r: -r.samples)[:top], key=lambda r: r.index):
        out.append(_line(row, total, str(row.index)))
    out += ["", "phases (samples between control instructions, >= 0.5%):"]
    pending, first = 0, None
    for row in rows:
        if CONTROL.search(row.sass):
            if pending and 100 * pending / total >= 0.5:
                out.append(f"  {f'{first}-{row.index - 1}':11s} {100 * pending / total:5.1f}%  ...")
            pending, first = 0, None
            if 100 * row.samples / total >= 0.5:
                out.append(_line(row, total, str(row.index)))
        else:
            first = row.index if first is None else first
            pending += row.samples
    reasons: Counter[str] = Counter()
    for row in rows:
        reasons.update(row.stalls)
    out += ["", "samples per stall reason:"]
    out += [f"  {name:24s} {100 * n / total:5.1f}%" for name, n in reasons.most_common(10)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path, help="the ncu --page source output")
    parser.add_argument("--top", type=int, default=25, help="hottest instructions to list")
    args = parser.parse_args(argv)
    try:
        raw = args.page.read_bytes()
        if args.page.suffix == ".gz":
            raw = gzip.decompress(raw)
        rows = parse(raw.decode(errors="replace"))
    except (OSError, ValueError, EOFError) as e:
        print(f"{args.page}: {e}", file=sys.stderr)
        return 2
    print(summary(rows, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

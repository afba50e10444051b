"""Memory and time of the TTGIR reader on large files, in multiples of the file's size.

    python -m benchmarks.cpu.bench_parse_memory [--sizes 1,16,64]
        [--kernels gemm_tma.t128x128x64_w4_s4.sm90,...] [--source DIR] [--out DIR]

A large file is K copies of one corpus kernel: the function under a new name and its
location aliases renamed, so that the file is as dense as Triton's own output (about 190
bytes of text per op). For each file, a fresh process reads it as `ws-solver` does (bytes,
then UTF-8) and parses it with `ws_solver.ir.parse`:

- RSS: the process's resident memory before the parse, its high-water mark during it (reset
  through /proc/self/clear_refs first) and what stays after it;
- traced: the peak and the retained size of Python's allocations during the parse
  (tracemalloc, in a second process: it slows the parse down);
- the parse's wall time (of the RSS run).

`--source DIR` measures the ws_solver package of another tree (e.g. an exported older
revision), for a before/after table. The target is a peak of at most 10 times the file.
Writes NAME.md and NAME.json (--name, default parse-memory) to --out (a results folder) and
prints the table; exit status 1 when a peak is over the target.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus" / "ttgir"
KERNELS = ("gemm_tma.t128x128x64_w4_s4.sm90", "attention_fwd.causal_d128_m128n128_w8_s2.sm100")
TARGET = 10.0  # peak memory of a parse, in file sizes

# Runs in a fresh process: argv = source root, file, "rss" | "traced"; prints one JSON line.
CHILD = r"""
import gc, json, sys, time
sys.path.insert(0, sys.argv[1])
from ws_solver import ir

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0

data = open(sys.argv[2], "rb").read()
text = data.decode("utf-8")
del data
gc.collect()
if sys.argv[3] == "traced":
    import tracemalloc
    tracemalloc.start()
    module = ir.parse(text)
    retained, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"traced_peak": peak, "traced_retained": retained}))
else:
    before = status("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        reset = True
    except OSError:
        reset = False
    start = time.perf_counter()
    module = ir.parse(text)
    wall = time.perf_counter() - start
    print(json.dumps({
        "rss_before": before, "rss_peak": status("VmHWM"), "rss_after": status("VmRSS"),
        "hwm_reset": reset, "parse_s": wall, "ops": sum(1 for _ in module.walk()),
    }))
"""


def replicate(text: str, copies: int) -> str:
    """`copies` copies of the module's function(s), each under new names: symbols get
    `_K`, location aliases `#locN_K` (with their definitions added), so that every copy is
    a well-formed part of one module."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("tt.func"))
    end = max(i for i, line in enumerate(lines) if line.startswith("  } loc("))
    head, body, tail = "".join(lines[:start]), "".join(lines[start : end + 1]), lines[end + 1 :]
    definitions = [line for line in lines if re.match(r"#loc\d* = ", line)]
    out, extra = [head], []
    for k in range(copies):
        if k == 0:
            out.append(body)
            continue
        renamed = re.sub(r"(#loc\d*)(?![\w.$-])", rf"\1_{k}", body)
        out.append(re.sub(r"@([\w$.]+)", rf"@\1_{k}", renamed))
        extra += [re.sub(r"(#loc\d*)(?![\w.$-])", rf"\1_{k}", d) for d in definitions]
    return "".join(out) + "".join(tail) + "".join(extra)


def big_file(kernel: str, megabytes: float, folder: Path) -> Path:
    text = (CORPUS / f"{kernel}.ttgir").read_text()
    copies = max(1, round(megabytes * 1e6 / len(text)))
    path = folder / f"{kernel}.x{copies}.ttgir"
    path.write_text(replicate(text, copies))
    return path


def measure(source: Path, path: Path) -> dict:
    """Both runs of CHILD on one file; sizes as multiples of the file's bytes."""
    result = {"file": path.name, "bytes": path.stat().st_size}
    for mode in ("rss", "traced"):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(source), str(path), mode],
            capture_output=True,
            text=True,
            check=True,
        )
        result.update(json.loads(done.stdout.strip().splitlines()[-1]))
    size = result["bytes"]
    result["rss_peak_x"] = (result["rss_peak"] - result["rss_before"]) / size
    result["rss_retained_x"] = (result["rss_after"] - result["rss_before"]) / size
    result["traced_peak_x"] = result["traced_peak"] / size
    result["traced_retained_x"] = result["traced_retained"] / size
    return result


def render(meta: dict, rows: list[dict]) -> str:
    lines = [
        f"# TTGIR parsing memory, {meta['date']}",
        "",
        f"- what: `ws_solver.ir.parse` of {meta['source_label']} on large files made of "
        "copies of one corpus kernel (see `benchmarks/cpu/bench_parse_memory.py`)",
        f"- command: `{meta['command']}`",
        f"- machine: {meta['machine']}; {meta['cpus']} CPU cores shared with other jobs "
        f"(load average {meta['load_before']} before, {meta['load_after']} after), so wall "
        "times are only indicative; memory does not depend on the load",
        f"- target: a peak of at most {TARGET:g} times the file's size",
        "",
        "| file | MB | ops | parse s | RSS peak × | RSS kept × | traced peak × | traced kept × |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['file']} | {r['bytes'] / 1e6:.1f} | {r['ops']} | {r['parse_s']:.1f} | "
            f"{r['rss_peak_x']:.1f} | {r['rss_retained_x']:.1f} | {r['traced_peak_x']:.1f} | "
            f"{r['traced_retained_x']:.1f} |"
        )
    worst = max(max(r["rss_peak_x"], r["traced_peak_x"]) for r in rows)
    verdict = "within" if worst <= TARGET else "OVER"
    lines += ["", f"Largest peak: {worst:.1f}× the file ({verdict} the {TARGET:g}× target).", ""]
    return "\n".join(lines)


def _load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return "{:.1f} / {:.1f} / {:.1f}".format(*os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,16,64", help="file sizes in MB (default 1,16,64)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="corpus file stems")
    parser.add_argument("--source", type=Path, default=ROOT, help="the tree whose ws_solver to use")
    parser.add_argument("--label", default="", help="what --source is, for the report")
    parser.add_argument("--out", type=Path, help="write NAME.md and NAME.json here")
    parser.add_argument("--name", default="parse-memory", help="file name stem for --out")
    args = parser.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",")]
    load_before = _load()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for kernel in args.kernels.split(","):
            for size in sizes:
                path = big_file(kernel, size, Path(folder))
                rows.append(measure(args.source, path))
                path.unlink()
                row = rows[-1]
                print(
                    f"{row['file']}: {row['bytes'] / 1e6:.1f} MB, peak RSS "
                    f"{row['rss_peak_x']:.1f}x, traced {row['traced_peak_x']:.1f}x, "
                    f"{row['parse_s']:.1f} s",
                    file=sys.stderr,
                )
    meta = {
        "date": datetime.date.today().isoformat(),
        "source_label": args.label or str(args.source),
        "command": "python -m benchmarks.cpu.bench_parse_memory "
        + shlex.join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()} {platform.system()}, Python {platform.python_version()}",
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": _load(),
    }
    text = render(meta, rows)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.name}.md").write_text(text)
        document = {"meta": meta, "target": TARGET, "rows": rows}
        (args.out / f"{args.name}.json").write_text(json.dumps(document, indent=2) + "\n")
    return 0 if all(max(r["rss_peak_x"], r["traced_peak_x"]) <= TARGET for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

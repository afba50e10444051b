"""Stock Triton's decision for the corpus dumps, recorded in each dump folder's index.json.

Each dump's kernel is compiled as Triton compiles it without ws_solver: the same source,
constexprs, options and target, on the CPU (``GPUTarget("cuda", 90|100, 32)``), through
ptxas, the same compile path the dump is taken on. Stock's decision is read from its final
TTGIR: a dumped ``tt.warp_specialize`` loop is specialized when stock's copies of it (the same
source location, call sites included) sit inside a ``ttg.warp_specialize`` op, and not when
it is left outside one with its attribute; where the TTGIR does not say, the loop's entry is
null. A compile that fails is recorded as stock's failure,
in one line. ``ws_solver.pipeline.stock`` defines the record and reads it for ``compare``.

    python -m corpus.stock DIR [DIR ...] [--only SUBSTRING]

re-captures each dump of DIR's index (it must equal the committed file: the record is for
that text), records stock's decision in its entry and rewrites the index. corpus/dump.py
and ``configspace dump`` record it as they dump.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from corpus import dump as corpus_dump  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402
from ws_solver.pipeline.stock import INDEX_NAME, StockDecision, digest  # noqa: E402

WS_OP = "ttg.warp_specialize"
_POSITION = re.compile(r'"([^"]*)":(\d+):(\d+)|(#loc\d*)')


def compile_stock(job: corpus_dump.Job) -> tuple[str | None, str]:
    """(stock's final TTGIR with relativized locs, "") or (None, why stock fails)."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget

    from ws_solver.triton.dropin.captured import captured_stderr
    from ws_solver.triton.toolchain.reasons import failure_reason

    config = corpus_kernels.load(job.kernel).CONFIGS[job.config]
    source = corpus_dump.ast_source(job.kernel, config)
    with (
        tempfile.TemporaryDirectory(prefix="ws_corpus_stock_") as cache_dir,
        knobs.cache.scope(),
        captured_stderr() as printed,
    ):
        knobs.cache.dir = cache_dir
        try:
            kernel = triton.compile(
                source,
                target=GPUTarget("cuda", corpus_dump.TARGETS[job.target], 32),
                options=corpus_kernels.options(config),
            )
        except Exception as e:  # stock's own failure on the kernel
            error = e
        else:
            error = None
    if error is not None:
        return None, failure_reason(error, printed.text)
    return corpus_dump.relativize_locs(kernel.asm["ttgir"], corpus_dump.path_prefixes()), ""


def loc_chain(loc: str, aliases: dict[str, str], depth: int = 0) -> tuple[str, ...]:
    """Every ``file:line:col`` of a ``loc(...)`` text, through #loc aliases (call sites too)."""
    out: list[str] = []
    for m in _POSITION.finditer(loc):
        if m.group(1) is not None:
            out.append(f"{m.group(1)}:{m.group(2)}:{m.group(3)}")
        elif depth < 32:
            out.extend(loc_chain(aliases.get(m.group(4), ""), aliases, depth + 1))
    return tuple(out)


def stock_loops(dump_text: str, stock_text: str) -> tuple[tuple[bool | None, ...], int]:
    """Per WS loop of the dump, whether stock's kernel runs it specialized (None: its
    TTGIR does not say), and the number of ``ttg.warp_specialize`` ops in it."""
    from ws_solver import ir
    from ws_solver.model.dfg import ws_loops

    dump = ir.parse(dump_text)
    wanted = [loc_chain(loop.op.location, dump.aliases) for loop in ws_loops(dump)]
    stock = ir.parse(stock_text)
    ops = sum(op.name == WS_OP for op in stock.walk())
    if ops == 0:  # nothing specialized: every loop runs as one partition
        return tuple(False for _ in wanted), 0
    seen: dict[tuple[str, ...], set[bool]] = {}
    for op in stock.walk():
        if op.name != "scf.for":
            continue
        # Stock's copies of a specialized loop may drop the attribute; a loop left alone
        # keeps it.
        inside = any(a.name == WS_OP for a in op.ancestors())
        if inside or op.has_attr("tt.warp_specialize"):
            seen.setdefault(loc_chain(op.location, stock.aliases), set()).add(inside)
    found = [next(iter(seen[k])) if len(seen.get(k, ())) == 1 else None for k in wanted]
    # Each specialized loop is one op: a count that does not match is not understood.
    if None not in found and sum(found) != ops:
        return tuple(None for _ in wanted), ops
    return tuple(found), ops


def stock_record(job: corpus_dump.Job, dump_text: str) -> dict:
    """The index entry's `stock` for one dump (ws_solver.pipeline.stock.StockDecision)."""
    import triton

    text, error = compile_stock(job)
    loops: tuple[bool | None, ...] = ()
    ops = 0
    if text is not None:
        loops, ops = stock_loops(dump_text, text)
    decision = StockDecision(
        triton=triton.__version__,
        target=job.target,
        loops=loops,
        error=error,
        dump_sha256=digest(dump_text),
        warp_specialize_ops=ops,
    )
    return decision.to_dict()


def summary(record: dict) -> str:
    if "error" in record:
        return f"stock fails: {record['error']}"
    loops = record["loops"]
    words = {True: "WS", False: "no WS", None: "unknown"}
    return "stock: " + ", ".join(words[x] for x in loops)


def record_folder(folder: Path, only: str | None = None) -> int:
    """Record stock's decision in `folder`'s index for each dump (whose name contains
    `only`); returns the number of dumps that could not be recorded (stale or missing)."""
    index_path = folder / INDEX_NAME
    data = json.loads(index_path.read_text())
    entries = data["dumps"] if isinstance(data, dict) else data
    problems = 0
    for entry in entries:
        if only is not None and only not in entry["file"]:
            continue
        job = corpus_dump.Job(entry["kernel"], entry["config"], entry["target"])
        path = folder / entry["file"]
        text = path.read_text() if path.exists() else None
        fresh = corpus_dump.relativize_locs(corpus_dump.capture(job), corpus_dump.path_prefixes())
        if text != fresh:  # the record must be for the committed text
            print(f"STALE {entry['file']}: re-dump it first", flush=True)
            problems += 1
            continue
        entry["stock"] = stock_record(job, text)
        print(f"{entry['file']}: {summary(entry['stock'])}", flush=True)
        corpus_dump.write_atomic(index_path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="dump folders (with index.json)")
    parser.add_argument("--only", default=None, help="only dumps whose name contains this")
    args = parser.parse_args(argv)
    from corpus import configspace

    configspace.register(configspace.space())  # the generated configs, by name
    return 1 if sum(record_folder(f, args.only) for f in args.folders) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Dump every corpus kernel x config x target as TTGIR at the partitioner input point.

Usage: python corpus/dump.py [--out DIR] [--only SUBSTRING]

The default --out is the installed Triton's folder: ``corpus/ttgir`` for 3.6.0,
``corpus/ttgir-3.9`` for 3.9.0 (``triton.toolchain.versions``); the IR differs between them.

The text is taken after ``schedule_loops`` and before warp specialization (see
``triton.toolchain.make_ttgir.run_until_partition``); file paths inside ``loc(...)`` are made
relative so that dumps are byte-identical across machines. Each index entry also records
stock Triton's decision for the kernel (``stock``: specialized per loop, or why stock fails;
``corpus/stock.py``), which ``ws-solver compare`` shows beside ws_solver's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import corpus  # noqa: E402
from corpus import kernels as corpus_kernels  # noqa: E402

TARGETS: dict[str, int] = {"sm90": 90, "sm100": 100}


def default_out() -> Path:
    """The installed Triton version's corpus folder."""
    return corpus.ttgir_dir()


TtgirStage = Callable[[Any, dict], Any]
StageFactory = Callable[[Any, int], TtgirStage]
_FILE_LOC = re.compile(r'loc\("([^"]+)":(\d+):(\d+)\)')
# A loop's attribute dict follows its closing brace: `} {..., tt.warp_specialize} loc(...)`.
_WS_LOOP = re.compile(r"^\s*\}.*\btt\.warp_specialize(?![\w.])", re.MULTILINE)


@dataclass(frozen=True)
class Job:
    kernel: str
    config: str
    target: str

    @property
    def file(self) -> str:
        return f"{self.kernel}.{self.config}.{self.target}.ttgir"


@dataclass(frozen=True)
class IndexEntry:
    file: str
    kernel: str
    config: str
    target: str
    num_warps: int
    num_stages: int
    constexprs: dict
    ws_loops: int
    stock: dict | None = None  # stock Triton's decision (corpus/stock.py, ws_solver.pipeline.stock)


class _StopAtPartitionPoint(Exception):
    """Raised inside the ttgir stage once the partitioner input has been captured."""


def jobs(only: str | None = None) -> list[Job]:
    """All kernel x config x target combinations whose file name contains ``only``."""
    found = [
        Job(name, config, target)
        for name in corpus_kernels.KERNEL_MODULES
        for config in corpus_kernels.load(name).CONFIGS
        for target in TARGETS
    ]
    return [j for j in found if only is None or only in j.file]


def count_ws_loops(text: str) -> int:
    """Number of loops carrying the ``tt.warp_specialize`` attribute."""
    return len(_WS_LOOP.findall(text))


def path_prefixes() -> list[tuple[str, str]]:
    """(absolute prefix, replacement) pairs for the repo root and the triton package."""
    import triton

    triton_dir = Path(triton.__file__).parent
    pairs = []
    for root, repl in ((REPO_ROOT, ""), (triton_dir, "triton/")):
        for form in {str(root), str(root.resolve())}:
            pairs.append((form.rstrip("/") + "/", repl))
    # Longest first so a venv nested in the repo maps to triton/..., not to the repo.
    return sorted(pairs, key=lambda p: -len(p[0]))


def relativize_locs(text: str, prefixes: list[tuple[str, str]]) -> str:
    """Rewrite absolute file names in ``loc("file":line:col)`` to machine-independent ones."""

    def repl(m: re.Match) -> str:
        path = m.group(1)
        for prefix, new in prefixes:
            if path.startswith(prefix):
                path = new + path[len(prefix) :]
                break
        return f'loc("{path}":{m.group(2)}:{m.group(3)})'

    return _FILE_LOC.sub(repl, text)


def _attrs(module: ModuleType, sig: dict[str, str]) -> dict[tuple[int, ...], list]:
    """Divisibility hints as Triton's launcher derives them for 16-byte aligned arguments."""
    divisible = set(getattr(module, "DIVISIBLE_ARGS", ()))
    return {
        (i,): [["tt.divisibility", 16]]
        for i, (name, ty) in enumerate(sig.items())
        if ty.startswith("*") or name in divisible
    }


def ast_source(kernel: str, config: dict) -> Any:
    """The ASTSource a corpus kernel compiles from for `config`: its signature, constexprs
    and the launcher's divisibility hints."""
    from triton.compiler import ASTSource

    module = corpus_kernels.load(kernel)
    sig = module.signature(config)
    return ASTSource(
        module.KERNEL, sig, constexprs=corpus_kernels.constexprs(config), attrs=_attrs(module, sig)
    )


def until_partition(options: Any, capability: int) -> TtgirStage:
    """The default captured stage: make_ttgir up to the partitioner input point."""
    from ws_solver.triton.toolchain.make_ttgir import run_until_partition

    return lambda mod, metadata: run_until_partition(mod, options, capability)


@contextmanager
def _capture_hook(sink: dict[str, str], make_stage: StageFactory) -> Iterator[None]:
    """Install a stages hook whose ttgir stage records the module text and stops compiling."""
    from triton import knobs

    from ws_solver.triton.toolchain.versions import stages_hook

    def install(backend: Any, stages: dict, options: Any, language: Any, capability: int) -> None:
        stage = make_stage(options, capability)

        def ttgir(mod: Any, metadata: dict) -> Any:
            sink["text"] = stage(mod, metadata).str()
            raise _StopAtPartitionPoint

        stages["ttgir"] = ttgir

    # The hook is not part of Triton's cache key: a cached kernel would skip it.
    with (
        tempfile.TemporaryDirectory(prefix="ws_corpus_cache_") as cache_dir,
        knobs.runtime.scope(),
        knobs.cache.scope(),
    ):
        knobs.cache.dir = cache_dir
        knobs.runtime.add_stages_inspection_hook = stages_hook(install, "ws_solver-corpus-dump")
        yield


def capture(job: Job, make_stage: StageFactory = until_partition) -> str:
    """Compile one job with ``make_stage(...)`` as its ttgir stage; return that stage's text."""
    import triton
    from triton.backends.compiler import GPUTarget

    config = corpus_kernels.load(job.kernel).CONFIGS[job.config]
    src = ast_source(job.kernel, config)
    sink: dict[str, str] = {}
    with _capture_hook(sink, make_stage), suppress(_StopAtPartitionPoint):
        triton.compile(
            src,
            target=GPUTarget("cuda", TARGETS[job.target], 32),
            options=corpus_kernels.options(config),
        )
    if "text" not in sink:
        raise RuntimeError(f"{job.file}: compile finished without reaching the ttgir stage")
    return sink["text"]


def verify_parses(text: str) -> None:
    """Parse and verify TTGIR text with Triton's dialects loaded; raises on failure."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    ctx = ir.context()
    ir.load_dialects(ctx)
    make_backend(GPUTarget("cuda", 100, 32)).load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
        f.write(text)
    try:
        ir.parse_mlir_module(f.name, ctx)
    finally:
        os.unlink(f.name)


def write_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def dump_job(job: Job, out: Path, stock: bool = False) -> IndexEntry:
    """Capture, relativize, verify and write one dump; return its index entry, with stock
    Triton's decision for it when `stock` (corpus/stock.py: one more compile, to ptxas)."""
    module = corpus_kernels.load(job.kernel)
    config = module.CONFIGS[job.config]
    text = relativize_locs(capture(job), path_prefixes())
    verify_parses(text)
    write_atomic(out / job.file, text)
    return IndexEntry(
        file=job.file,
        kernel=job.kernel,
        config=job.config,
        target=job.target,
        num_warps=config["num_warps"],
        num_stages=config["num_stages"],
        constexprs=corpus_kernels.constexprs(config),
        ws_loops=count_ws_loops(text),
        stock=_stock_record(job, text) if stock else None,
    )


def _stock_record(job: Job, text: str) -> dict:
    from corpus.stock import stock_record

    return stock_record(job, text)


def merge_index(old: list[dict], new: list[IndexEntry]) -> list[dict]:
    """Replace the entries of re-dumped files, keep the rest, sort by file name."""
    by_file = {e["file"]: e for e in old}
    by_file.update({e.file: asdict(e) for e in new})
    return [by_file[f] for f in sorted(by_file)]


def remove_stale(out: Path, keep: set[str]) -> None:
    """Delete dumps in ``out`` that no current kernel x config x target produces."""
    for path in sorted(out.glob("*.ttgir")):
        if path.name not in keep:
            print(f"rm   {path.name} (stale)")
            path.unlink()


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def main(argv: list[str] | None = None) -> int:
    """Dump the selected jobs and update index.json; returns the number of failures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="default: see above")
    parser.add_argument("--only", default=None, help="dump only files whose name contains this")
    args = parser.parse_args(argv)
    args.out = args.out or default_out()
    args.out.mkdir(parents=True, exist_ok=True)
    index_path = args.out / "index.json"
    # A full run rebuilds the index; a partial one updates the entries it re-dumps.
    old = json.loads(index_path.read_text()) if args.only and index_path.exists() else []
    entries, failures = [], 0
    for job in jobs(args.only):
        try:
            entry = dump_job(job, args.out, stock=True)
        except Exception as e:  # report and go on: one bad kernel must not hide the others
            failures += 1
            print(f"FAIL {job.file}: {_first_line(e)}")
            continue
        entries.append(entry)
        size = (args.out / job.file).stat().st_size
        print(f"ok   {job.file} ({size} B, {entry.ws_loops} ws loop(s))")
    # Entries and dumps of configs that no longer exist go, in a partial run too.
    current = {job.file for job in jobs()}
    index = merge_index([e for e in old if e["file"] in current], entries)
    remove_stale(args.out, {e["file"] for e in index})
    write_atomic(index_path, json.dumps(index, indent=1, sort_keys=True) + "\n")
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)

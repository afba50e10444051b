"""What ptxas makes of every configuration of the config space, per strategy, on the CPU.

For each configuration (corpus/configspace.py) × target × strategy this compiles the kernel
with Triton (no GPU: ``benchmarks.common.bench_compile.compile_job``) and assembles its PTX with
``ptxas -v`` (``triton.toolchain.binary_usage.ptx_usage``): registers, stack, spill bytes and
whether ptxas serialized the wgmmas; and the registers and stack of the binary Triton built
(``cubin_usage``: Triton's ptxas options can differ from plain ``-v``). Per configuration ×
target it also records the model's registers per thread of the unspecialized loop, from the
TTGIR at the partitioner input point.
One JSON line per record in one output file (resumable: what the file holds is skipped).

    python -m benchmarks.cpu.configspace_usage --out FILE [--slice ci] [--family F]
        [--every K] [--configs FILE] [--target sm90,sm100] [--strategies builtin,none,...]
        [--jobs N] [--limit N]
    python -m benchmarks.cpu.configspace_usage --summary FILE [FILE ...]

Each configuration × target runs in a child process (``--child``) with its own Triton caches:
a compile that crashes or hangs takes only that child down, and its records say so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks.cpu.configspace_records import (
    STRATEGIES,
    TARGETS,
    read_records,
    record_key,
    summary,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPILE_TIMEOUT_S = 180  # per strategy; a normal compile + ptxas takes 1-5 s on one core
_FAILED_PASS = re.compile(r"Pipeline failed while executing \[`(\w+)`")


@dataclass(frozen=True)
class Task:
    """One child process: a configuration × target, the model record and the strategies."""

    key: str  # family.name
    target: str
    strategies: tuple[str, ...]


# -- the child: one configuration × target ------------------------------------------------------
def _model_record(family: str, name: str, target: str, triton_version: str) -> dict:
    """The model's registers per thread of each unspecialized loop, from the dumped TTGIR."""
    from corpus.dump import Job, capture
    from ws_solver.ir import parse
    from ws_solver.model.cost_table import cost_table
    from ws_solver.model.dfg import build_graph, ws_loops
    from ws_solver.model.resources import unspecialized_registers
    from ws_solver.model.target import target_for

    rec: dict = {"kind": "model"}
    start = time.perf_counter()
    try:
        module = parse(capture(Job(family, name, target)))
        tgt = target_for(f"sm_{TARGETS[target]}", triton_version)
        regs = [
            unspecialized_registers(cost_table(build_graph(module, loop), tgt))
            for loop in ws_loops(module)
        ]
        rec["predicted_registers"] = regs
        rec["predicted_max"] = max(regs) if regs else None
    except Exception as e:  # the record says why; the compiles still run
        rec["error"] = _first_line(e)
    rec["model_s"] = round(time.perf_counter() - start, 2)
    return rec


def _compile_record(family: str, name: str, strategy: str, capability: int, cache: Path) -> dict:
    """Compile one strategy's kernel and read ptxas's report of its PTX."""
    from benchmarks.common.bench_compile import Job, compile_job
    from ws_solver.triton.toolchain.binary_usage import cubin_usage, ptx_usage

    with _stderr_captured() as printed:
        compiled, info = compile_job(Job(family, name, strategy), cache, capability)
    rec: dict = {"kind": "compile", "ok": compiled is not None}
    rec["compile_s"] = info.get("compile_s")
    if "error" in info:
        rec["error"] = info["error"]
        detail = mlir_error(printed())
        if detail:
            rec["error_detail"] = detail
    for k in ("num_warps", "shared_bytes", "warp_specialize_ops", "partition_regions", "binary"):
        if k in info:
            rec[k] = info[k]
    dropin = info.get("dropin")
    if dropin:
        rec["dropin_strategy"] = dropin.get("strategy_used")
        rec["dropin_loops"] = [
            {
                "loop": loop.get("loop"),
                "specialized": loop.get("specialized"),
                "reason": str(loop.get("reason", ""))[:200],
            }
            for loop in dropin.get("loops", [])
        ]
        rec["dropin_fallbacks"] = len(dropin.get("fallbacks", []))
        decision = dropin.get("decision") or {}
        if decision:  # the decision check: stock's decision, the rule, its evidence
            rec["decision"] = {
                "rule": decision.get("rule"),
                "evidence": str(decision.get("evidence", ""))[:300],
                "stock_specialized": (decision.get("stock") or {}).get("specialized"),
                "kept": decision.get("kept"),
                "spill_check": str(decision.get("spill_check", ""))[:400],
                # every build the check weighed, as it recorded them (usage with the SASS
                # loop counts where one spilled): enough to replay the rule offline
                "builds": {
                    role: decision[role]
                    for role in ("ours", "other", "stock", "triton")
                    if isinstance(decision.get(role), dict)
                },
            }
    if compiled is not None:
        start = time.perf_counter()
        try:
            rec["ptxas"] = ptx_usage(compiled.asm["ptx"], capability).to_dict()
        except Exception as e:
            rec["ptxas_error"] = _first_line(e)
        rec["ptxas_s"] = round(time.perf_counter() - start, 2)
        # `ptxas` above is plain `ptxas -v` on the PTX; Triton assembles with its own options
        # (3.9: --regAllocOptLevel=2), so the binary it built can spill otherwise: its
        # registers and stack, read back from the cubin, are what the drop-in's check weighs.
        why = _unlaunchable(compiled)
        if why:  # e.g. Triton 3.9's lone-trap kernel of a TMEM overflow: it builds, never runs
            rec["unlaunchable"] = why
        try:
            usage = cubin_usage(compiled.asm["cubin"])
            rec["cubin"] = {"registers": usage.registers, "stack_bytes": usage.stack_bytes}
            if usage.loop_spills is not None:  # where the binary's spill instructions sit
                rec["cubin"]["loop_spills"] = usage.loop_spills.to_dict()
        except Exception as e:
            rec["cubin_error"] = _first_line(e)
    return rec


def _unlaunchable(compiled) -> str:
    """Why the compiled kernel cannot run (the drop-in's own test: too much shared or tensor
    memory, or a lone trap); "" when it can or the test cannot say."""
    from ws_solver.triton.toolchain.unlaunchable import unlaunchable

    try:
        metadata = compiled.metadata._asdict()
        return unlaunchable(metadata, str(compiled.asm.get("llir", "")))
    except Exception:
        return ""


@contextlib.contextmanager
def _stderr_captured() -> Iterator[Callable[[], str]]:
    """Capture file descriptor 2 (MLIR prints its diagnostics there, not in the exception);
    yields a function returning what was printed (read once the block is left), and echoes
    the tail of it to the real stderr."""
    sys.stderr.flush()
    saved, held = os.dup(2), [b""]
    with tempfile.TemporaryFile("w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield lambda: held[0].decode(errors="replace")
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            held[0] = tmp.read()
            os.write(2, held[0][-4000:])


def mlir_error(text: str) -> str | None:
    """The first MLIR diagnostic ``...: error: MESSAGE`` of compiler output, without its
    location, else the pass the pipeline failed in; None when there is neither."""
    failed_pass = None
    for line in text.splitlines():
        _, sep, message = line.partition(" error: ")
        if sep and "Failures have been detected" not in message:
            return message.strip()[:300]
        m = _FAILED_PASS.search(line)
        if m and failed_pass is None:
            failed_pass = f"{m.group(1)} failed (no diagnostic)"
    return failed_pass


def child(key: str, target: str, strategies: list[str], out: Path, model: bool) -> None:
    """Write the records of one configuration × target to `out`, one line as each is done."""
    import triton

    from corpus import configspace

    configspace.register(configspace.space())
    family, name = key.split(".", 1)
    base = {"config": key, "family": family, "name": name, "target": target}
    base["triton"] = triton.__version__
    with open(out, "a") as f, tempfile.TemporaryDirectory(prefix="ws_cs_usage_") as cache:

        def emit(rec: dict) -> None:
            f.write(json.dumps(base | rec, sort_keys=True) + "\n")
            f.flush()

        if model:
            emit(_model_record(family, name, target, triton.__version__))
        for strategy in strategies:
            rec = _compile_record(family, name, strategy, TARGETS[target], Path(cache))
            emit({"strategy": strategy} | rec)


def run_task(task: Task, triton_version: str, model: bool, timeout: float) -> list[dict]:
    """`child` in a subprocess; records for what it did not write say why."""
    with tempfile.TemporaryDirectory(prefix="ws_cs_task_") as work:
        out = Path(work) / "records.jsonl"
        cmd = [sys.executable, "-m", "benchmarks.cpu.configspace_usage", "--child", task.key]
        cmd += ["--target", task.target, "--strategies", ",".join(task.strategies)]
        cmd += ["--out", str(out)] + ([] if model else ["--no-model"])
        error = None
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT
            )
            if proc.returncode:
                tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-2:]
                error = f"child died (rc {proc.returncode}): {' | '.join(tail)[:300]}"
        except subprocess.TimeoutExpired:
            error = f"timed out after {timeout:.0f} s"
        records = [json.loads(ln) for ln in out.read_text().splitlines()] if out.exists() else []
    family, name = task.key.split(".", 1)
    base = {"config": task.key, "family": family, "name": name, "target": task.target}
    base["triton"] = triton_version
    done = {(r["kind"], r.get("strategy")) for r in records}
    wanted = ([("model", None)] if model else []) + [("compile", s) for s in task.strategies]
    for kind, strategy in wanted:
        if (kind, strategy) not in done:
            rec = base | {"kind": kind, "error": error or "no record written"}
            if kind == "compile":
                rec |= {"strategy": strategy, "ok": False}
            records.append(rec)
    return records


# -- the sweep ------------------------------------------------------------------------------------
def every_kth(entries: list, k: int) -> list:
    """Every `k`-th entry of each family, in the given (index) order, from each family's
    first: a sample fixed by the space alone, before any result is seen."""
    if k < 1:
        raise ValueError(f"--every must be at least 1, not {k}")
    seen: dict[str, int] = {}
    out = []
    for e in entries:
        i = seen.get(e.family, 0)
        seen[e.family] = i + 1
        if i % k == 0:
            out.append(e)
    return out


def plan_tasks(
    entries: list, targets: list[str], strategies: list[str], triton_version: str, have: set
) -> list[tuple[Task, bool]]:
    """(task, model wanted) for everything `have` lacks: targets in the given order, within
    each the configurations in `sample_order` (a partial run is a spread sample)."""
    from corpus.configspace import sample_order

    tasks = []
    for target in targets:
        for e in sample_order(entries):
            todo = tuple(
                s for s in strategies if ("compile", e.key, target, triton_version, s) not in have
            )
            model = ("model", e.key, target, triton_version, None) not in have
            if todo or model:
                tasks.append((Task(e.key, target, todo), model))
    return tasks


def sweep(args: argparse.Namespace) -> int:
    import triton

    from corpus.configspace import select

    version = triton.__version__
    entries = every_kth(select(args.slice, args.family), args.every)
    if args.configs:  # only the configurations the file names, one family.name a line
        wanted = set(args.configs.read_text().split())
        entries = [e for e in entries if e.key in wanted]
    have = {record_key(r) for r in read_records([args.out]) if "kind" in r}
    tasks = plan_tasks(entries, args.targets, args.strategies, version, have)
    if args.limit:
        tasks = tasks[: args.limit]
    print(f"{len(tasks)} configuration × target tasks to run ({version})", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    start, failures = time.perf_counter(), 0

    def one(item: tuple[Task, bool]) -> list[dict]:
        task, model = item
        timeout = 60 + COMPILE_TIMEOUT_S * max(1, len(task.strategies))
        return run_task(task, version, model, timeout)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool, open(args.out, "a") as f:
        for i, records in enumerate(pool.map(one, tasks), 1):
            for rec in records:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            bad = [r for r in records if r.get("error")]
            failures += len(bad)
            r0 = records[0]
            line = f"[{i}/{len(tasks)} {time.perf_counter() - start:.0f}s] {r0['config']} "
            line += f"{r0['target']}: " + " ".join(_short(r) for r in records)
            print(line, file=sys.stderr, flush=True)
    return 1 if failures and args.strict else 0


def _short(rec: dict) -> str:
    if rec["kind"] == "model":
        return f"model={rec.get('predicted_max', 'ERR')}"
    if not rec.get("ok"):
        return f"{rec['strategy']}=ERR"
    p = rec.get("ptxas") or {}
    spill = "+spill" if p.get("stack_bytes") or p.get("spill_store_bytes") else ""
    ws = "/ws" if rec.get("warp_specialize_ops") else ""
    return f"{rec['strategy']}={p.get('registers', '?')}{spill}{ws}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {(text.splitlines() or [''])[0][:300]}"


def _csv(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the JSONL file records are appended to")
    parser.add_argument("--summary", type=Path, nargs="+", help="print the summary of files")
    parser.add_argument("--slice", default=None, help="ci, or all (default)")
    parser.add_argument("--family", default=None)
    parser.add_argument(
        "--every", type=int, default=1, help="every K-th config of each family (index order)"
    )
    parser.add_argument(
        "--configs", type=Path, default=None, help="a file of family.name lines: only those"
    )
    parser.add_argument("--target", dest="targets", type=_csv, default=list(TARGETS))
    parser.add_argument("--strategies", type=_csv, default=list(STRATEGIES))
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--limit", type=int, default=0, help="at most this many tasks")
    parser.add_argument("--strict", action="store_true", help="exit 1 if any record failed")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-model", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(read_records(args.summary)), end="")
        return 0
    if args.out is None:
        parser.error("--out is required")
    for t in args.targets:
        if t not in TARGETS:
            parser.error(f"unknown target {t!r} ({', '.join(TARGETS)})")
    if args.child:
        child(args.child, args.targets[0], args.strategies, args.out, not args.no_model)
        return 0
    return sweep(args)


if __name__ == "__main__":
    sys.exit(main())

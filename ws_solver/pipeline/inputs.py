"""TTGIR inputs as the entry points take them: the files a path names, a file or text read
and parsed, its warp-specialized loops and target, and why a loop's plan cannot be used.

Every failure is a one-line `ReportedError` naming the file (and line, column or loop), with
the exit status it ends a command with.
"""

from __future__ import annotations

from pathlib import Path

from .. import ir
from ..core import readers
from ..core.failures import EXIT_INFEASIBLE, EXIT_TIMEOUT, ReportedError
from ..core.strategy import Strategy
from ..model.check import check_plan
from ..model.dfg import ws_loops
from ..model.graph import LoopGraph


def ttgir_under(arg: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The files one command-line path names: itself, or for a folder its `*.ttgir` regular
    files, recursively and sorted; plus the entries of the folder that were skipped, with
    the message saying why (a dangling link, a FIFO...). ReportedError when the path does
    not exist or the folder holds no `*.ttgir` entry at all."""
    path = Path(arg)
    if not path.is_dir():
        if path.exists():
            return [path], []
        if path.is_symlink():
            raise ReportedError(f"{arg}: dangling symbolic link")
        raise ReportedError(f"{arg}: no such file or directory")
    files, skipped = [], []
    for entry in sorted(path.rglob("*.ttgir")):
        if entry.is_file():
            files.append(entry)
        elif entry.is_symlink() and not entry.exists():
            skipped.append((entry, f"{entry}: skipped: dangling symbolic link"))
        elif not entry.is_dir():
            skipped.append((entry, f"{entry}: skipped: not a regular file"))
    if not files and not skipped:
        raise ReportedError(f"{arg}: no *.ttgir files in this directory")
    return files, skipped


def read_module(path: Path) -> ir.Module:
    """Read and parse one TTGIR file; any failure names file, line, column."""
    return parse_module(path, read_input(path))


def read_input(path: Path | str) -> str:
    """The text of one TTGIR input file, through the one bounded reader: a regular file of at
    most ``readers.MAX_INPUT_BYTES``, UTF-8 (a FIFO or /dev/zero is refused before it is read);
    a ReportedError naming the file (and line and column of bad UTF-8) otherwise."""
    try:
        data = readers.read_bytes(path, readers.MAX_INPUT_BYTES, follow=True)
    except readers.BadFile as e:
        raise ReportedError(f"{path}: cannot read: {e}") from None
    if data is None:
        raise ReportedError(f"{path}: cannot read: no such file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ReportedError(f"{path}:{line}:{column}: not UTF-8 text") from None
    return text


def parse_module(name: Path | str, text: str) -> ir.Module:
    """Parse TTGIR text; a ParseError becomes a ReportedError naming `name`, line, column.
    TTGIR past the planner's input point is refused too (`require_planner_input`)."""
    try:
        module = ir.parse(text)
    except ir.ParseError as e:
        raise ReportedError(f"{name}:{e.line}:{e.column}: {e.reason}") from None
    require_planner_input(name, module)
    return module


# Ops that only exist once Triton has split a loop into warp groups (its add_warp_specialize
# pass): what `kernel.asm["ttgir"]` holds for a specialized kernel.
_SPLIT_OPS = ("ttg.warp_specialize", "ttg.warp_return", "ttg.warp_yield")
PLANNER_INPUT_HINT = (
    "plan the TTGIR Triton has before its warp specialization, which the drop-in writes "
    "with WS_SOLVER_DUMP=DIR"
)


def require_planner_input(name: Path | str, module: ir.Module) -> None:
    """Refuse TTGIR the planner cannot take: a module already split into warp-specialized
    partitions (its loops' bodies sit in `ttg.warp_specialize` regions, where they would be
    planned as loops of their own) or lowered to the LLVM dialect. One ReportedError (bad
    input) naming the file, the first such op and where the planner's input comes from."""
    for op in module.walk():
        if op.name in _SPLIT_OPS:
            what = "already warp-specialized"
        elif op.name.startswith("llvm."):
            what = "already lowered to LLVM"
        else:
            continue
        raise ReportedError(
            f"{name}:{op.line}: {what} ({op.name}): this is compiled TTGIR, past the "
            f"planner's input; {PLANNER_INPUT_HINT}"
        )


def require_ws_loops(path: Path | str, module: ir.Module) -> list:
    """The module's warp-specialized loops; a ReportedError (bad input) when there is none."""
    loops = ws_loops(module)
    if not loops:
        raise ReportedError(f"{path}: no loop carries tt.warp_specialize")
    return loops


def module_target(
    path: Path | str, module: ir.Module, override: str | None, triton: str | None = None
):
    """The Target to plan for: `override`, else the module's ttg.target (ReportedError if
    neither), under Triton `triton`'s lowering rules (None: 3.6.0)."""
    from .partition import resolve_target

    try:
        return resolve_target(module, override, triton)
    except ValueError as e:
        raise ReportedError(f"{path}: {e}") from None


def loop_place(path: Path | str, kernel: str, loop: int, line: int) -> str:
    """How messages name a loop: `FILE:LINE: KERNEL loop N`."""
    return f"{path}:{line}: {kernel} loop {loop}"


def plan_failure(
    plan, details: dict, graph: LoopGraph, target, strategy: str
) -> ReportedError | None:
    """Why a strategy's plan cannot be used, as a ReportedError with the matching exit
    status, or None when it can. Strategy "none" never fails: not specializing is always
    possible."""
    if strategy == Strategy.NONE:
        return None
    status = details.get("status")
    problems = check_plan(plan, graph, target)
    if status == "INFEASIBLE":
        why = f" ({problems[0]})" if problems else ""
        return ReportedError(
            f"infeasible: no plan fits the {target.name} limits{why}", EXIT_INFEASIBLE
        )
    if not problems:
        return None
    if status in (None, "OPTIMAL", "FEASIBLE"):
        # The heuristic (or a skipped solve) gave a plan that breaks a hard limit; nothing
        # better is known, so the loop cannot be planned within the limits.
        return ReportedError(
            f"no valid plan within the {target.name} limits: {problems[0]}", EXIT_INFEASIBLE
        )
    return ReportedError(
        f"the solver's time ran out with no valid plan (status {status}; {problems[0]}); "
        "raise --time-limit",
        EXIT_TIMEOUT,
    )

"""Every file ws_solver reads back goes through the one bounded reader (``core/readers.py``):
no other module of the package opens a file to read it, reads a path whole
(``Path.read_text``/``read_bytes``) or decodes JSON (``json.load``/``json.loads``), except
the few named in ``ALLOWED``, each with its reason. A new reader elsewhere fails here."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ws_solver"
READER = "ws_solver/core/readers.py"

# (file, the call as written) -> why it may read without the reader.
ALLOWED = {
    ("ws_solver/autoload.py", "open(pth_source(), encoding='utf-8')"): (
        "the package's own .pth line, shipped beside this module"
    ),
    ("ws_solver/pipeline/plancache.py", "f.read_bytes()"): (
        "ws_solver's own source files, digested into the plan-cache key"
    ),
    ("ws_solver/triton/guard/server.py", "open(path, 'rb')"): (
        "the helper's own stderr log, a temporary file it made, read at most 64 tails"
    ),
    ("ws_solver/triton/dropin/records.py", "json.loads(r.plan.to_json())"): (
        "a plan's JSON made in memory a line before, no file"
    ),
    ("ws_solver/backends/reaper.py", "(PROC / entry / 'stat').read_text()"): (
        "the kernel's own /proc entries (size 0 on stat, so no size cap applies), polled"
    ),
    ("ws_solver/backends/reaper.py", "(PROC / str(pid) / 'cmdline').read_bytes()"): (
        "the kernel's own /proc entries, polled to find a killed driver's Ray processes"
    ),
}

WRITE_MODES = set("wax+")


def _mode(call: ast.Call, position: int) -> str | None:
    """The constant mode argument of an open() call (None when not a constant)."""
    node = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            node = keyword.value
    if node is None:
        return "r"
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def reads(call: ast.Call) -> bool:
    """Whether ``call`` reads a file (or decodes JSON) itself."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        mode = _mode(call, 1)
        return mode is None or not set(mode) & WRITE_MODES
    if not isinstance(func, ast.Attribute):
        return False
    owner = ast.unparse(func.value)
    if func.attr in ("read_text", "read_bytes"):
        return owner not in ("readers", "cachefiles")
    if func.attr in ("load", "loads") and owner == "json":
        return True
    if func.attr == "open" and owner == "os":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        creates = len(call.args) > 2  # a mode: it may create the file, so it writes
        return not (creates or "O_WRONLY" in flags or "O_RDWR" in flags)
    if func.attr == "fdopen" and owner == "os":
        mode = _mode(call, 1)
        return mode is None or not set(mode) & WRITE_MODES
    if func.attr == "open" and owner not in ("os", "tarfile", "zipfile"):
        mode = _mode(call, 0)
        return mode is None or not set(mode) & WRITE_MODES
    return False


def readers_outside(root: Path = PACKAGE) -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        if name == READER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), name)):
            if isinstance(node, ast.Call) and reads(node):
                found.append((name, ast.unparse(node), node.lineno))
    return found


def test_no_module_reads_a_file_but_the_reader() -> None:
    stray = [
        f"{name}:{line}: {call}"
        for name, call, line in readers_outside()
        if (name, call) not in ALLOWED
    ]
    assert not stray, "read these through ws_solver.core.readers:\n" + "\n".join(stray)


def test_every_allowed_reader_is_still_there() -> None:
    """An exception whose call is gone is dropped from the list, not kept as a loophole."""
    present = {(name, call) for name, call, _ in readers_outside()}
    assert set(ALLOWED) <= present, set(ALLOWED) - present


def test_the_scan_finds_each_kind_of_read(tmp_path: Path) -> None:
    """The scan itself can fail: each way of reading a file is found, writes are not."""
    sources = {
        "Path(p).read_text()": True,
        "p.read_bytes()": True,
        "json.loads(text)": True,
        "json.load(f)": True,
        "open(p)": True,
        "open(p, 'rb')": True,
        "os.open(p, os.O_RDONLY)": True,
        "os.fdopen(fd)": True,
        "p.open()": True,
        "open(p, 'w')": False,
        "os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)": False,
        "os.fdopen(fd, 'w')": False,
        "readers.read_text(p, 10)": False,
        "cachefiles.read_text(p)": False,
    }
    for source, expected in sources.items():
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call)
        assert reads(call) is expected, source

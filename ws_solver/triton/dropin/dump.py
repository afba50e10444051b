"""The planner's input and output of each drop-in compile, on request: ``WS_SOLVER_DUMP=DIR``
or ``enable(dump_dir=DIR)``.

Per compiled kernel with a warp-specialized loop, four files named by the kernel and Triton's
hash of the compile (``<kernel>.<hash>``):

- ``.input.ttgir``: the TTGIR at the planner's input point, what ``ws-solver partition``,
  ``explain``, ``explore`` and ``compare`` take (``compare DIR`` plans every such file);
- ``.annotated.mlir``: the same text with the kept plan's annotations (the tags taken off an
  unspecialized loop), as the drop-in handed it to Triton's lowering (not ``.ttgir``, so that
  ``compare DIR`` does not plan it again);
- ``.plan.json``: each loop's record (plan, partitions, modeled II, solver status);
- ``.report.txt``: the compile report as ``CompileReport.summary()`` writes it.

Each file is written whole or not at all; a folder that cannot be written costs a note in
the report, never the compile.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ...pipeline.plancache import _write_atomic
from .session import CompileReport

_UNSAFE = re.compile(r"[^\w.$-]")


def stem(kernel: str, triton_hash: str | None, text: str) -> str:
    """``<kernel>.<hash>``: Triton's hash of the compile (else the input's), shortened."""
    digest = triton_hash or hashlib.sha256(text.encode()).hexdigest()
    return f"{_UNSAFE.sub('_', kernel)[:80]}.{digest[:12]}"


def write(
    folder: str,
    report: CompileReport,
    triton_hash: str | None,
    part_text: str,
    annotated: str | None,
) -> list[str]:
    """Write the files of one compile into ``folder``; the paths written (OSError when the
    folder cannot take them)."""
    base = Path(folder)
    base.mkdir(parents=True, exist_ok=True)
    name = stem(report.kernel, triton_hash, part_text)
    files = {
        f"{name}.input.ttgir": part_text,
        f"{name}.plan.json": json.dumps(report.loops, indent=1, sort_keys=True, default=str),
        f"{name}.report.txt": report.summary() + "\n",
    }
    if annotated is not None:
        files[f"{name}.annotated.mlir"] = annotated
    written = []
    for file_name, text in files.items():
        _write_atomic(base / file_name, text)
        written.append(str(base / file_name))
    return written

"""What ptxas made of a kernel: registers per thread, spilled bytes, serialized wgmmas.

Three readers, all on the CPU and all with the tools Triton ships:

- `cubin_usage` reads a finished cubin's resource table (``cuobjdump -res-usage``): registers
  and the stack frame, which in a Triton kernel is spill space. Milliseconds; no ptxas run.
- `assembled_usage` runs Triton's own ``make_cubin`` (its ptxas, with its flags) with the
  ptxas log on and reads the log: registers, stack frame, spill stores and loads, and
  ptxas's C7511 note that it serialized the wgmma pipeline for lack of registers (the cliff
  behind sm_90's several-fold losses). What the guard's child uses.
- `ptx_usage` does the same with a plain ``ptxas -v`` of the PTX (Triton's ptxas for the
  capability, without Triton's other flags): for PTX outside a compile.

Where a kernel spills, `assemble` and `cubin_usage` add where its spill instructions sit
(`sass_loops`: inside its loops or outside, from the bundled ``nvdisasm``; the guard's child
leaves that to `cubin_loop_spills`, run where the decision check compares two spilling builds).
`BinaryUsage.worse_than` and `relieved_by` order two kernels by their spills, those on an
inner loop's every-iteration path first, then bytes, for the drop-in's check of its
decision (decision_check.py) and the config-space sweep.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, fields, replace
from typing import Any

from .sass_loops import LoopSpills, loop_spills

_RES_USAGE = re.compile(r"REG:(\d+)\s+STACK:(\d+)")
_USED = re.compile(r"Used (\d+) registers")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SERIALIZED = "wgmma.mma_async instructions are serialized"
TOOL_TIMEOUT_S = 120.0


class UsageUnavailable(RuntimeError):
    """The tool is missing, failed or printed nothing this reader understands."""


@dataclass(frozen=True)
class BinaryUsage:
    """One kernel's register use as the assembler reports it."""

    registers: int
    stack_bytes: int
    spill_store_bytes: int | None = None  # ptxas -v only
    spill_load_bytes: int | None = None
    wgmma_serialized: bool | None = None  # ptxas -v only (sm_90)

    loop_spills: LoopSpills | None = None  # where a spilling kernel's LDL/STL sit, if read

    @property
    def spills(self) -> bool:
        return bool(self.stack_bytes or self.spill_store_bytes)

    @property
    def spilled_bytes(self) -> int:
        return max(self.stack_bytes, self.spill_store_bytes or 0)

    @property
    def hot_spills(self) -> int | None:
        """Spill instructions on an inner loop's every-iteration path (0 without a spill;
        None where the SASS was not read)."""
        if not self.spills:
            return 0
        return self.loop_spills.hot if self.loop_spills is not None else None

    def worse_than(self, other: BinaryUsage) -> bool:
        """More spill instructions on an inner loop's every-iteration path where both counts
        are known and differ, else more bytes spilled. Hot spills first: a 36 B kernel
        reloading its loop counter every K step ran 0.61x a 72 B one spilling only around
        its epilogue (issue 48). Not the C7511 note alone: on the H200 ptxas prints it for
        unspecialized 8-warp GEMMs of 58-93 registers that run as fast as stock's (they are
        stock's); a 4-warp 128x256 kernel that runs 7x slower spills as well."""
        mine, theirs = self.hot_spills, other.hot_spills
        if mine is not None and theirs is not None and mine != theirs:
            return mine > theirs
        return self.spilled_bytes > other.spilled_bytes

    def relieved_by(self, other: BinaryUsage) -> bool:
        """Whether `other` spills at most half the bytes of this kernel, and no more spill
        instructions in hot loops where both counts are known (decision_check.py says why
        half). Hot counts veto, they do not switch on their own: on Triton 3.6 they alone would
        trade causal attention d128 m128n64 w4's specialized build (56 B, 11 hot) for
        Triton's partitioner's (40 B, 5 hot), untimed, and that partitioner's build of the
        s2 `ahead` twin ran 1.65x slower on the H100 (2026-12-07-measured-candidates-h100)."""
        if 2 * other.spilled_bytes > self.spilled_bytes:
            return False
        mine, theirs = self.hot_spills, other.hot_spills
        return mine is None or theirs is None or theirs <= mine

    def summary(self) -> str:
        """One phrase for reports: '255 registers, 624 B spilled, 3 spill instructions in
        hot loops, wgmmas serialized'."""
        parts = [f"{self.registers} registers"]
        spilled = self.spilled_bytes
        parts.append(f"{spilled} B spilled" if spilled else "no spill")
        if spilled and self.loop_spills is not None:
            parts.append(f"{self.loop_spills.hot} spill instructions in hot loops")
        if self.wgmma_serialized:
            parts.append("wgmmas serialized")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The fields as JSON; `loop_spills` only where it was read (older readers' shape)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        spills = out.pop("loop_spills")
        if spills is not None:
            out["loop_spills"] = spills.to_dict()
        return out

    @staticmethod
    def from_dict(data: dict) -> BinaryUsage:
        """`to_dict` read back; keys this version does not know are ignored."""
        known = {f.name for f in fields(BinaryUsage)}
        values = {k: v for k, v in data.items() if k in known}
        spills = values.pop("loop_spills", None)
        if isinstance(spills, dict):
            values["loop_spills"] = LoopSpills(**spills)
        return BinaryUsage(**values)


def parse_res_usage(text: str) -> BinaryUsage:
    """The first kernel's line of ``cuobjdump -res-usage`` output."""
    m = _RES_USAGE.search(text)
    if m is None:
        raise UsageUnavailable("cuobjdump printed no resource usage")
    return BinaryUsage(registers=int(m.group(1)), stack_bytes=int(m.group(2)))


def parse_ptxas_log(text: str) -> BinaryUsage:
    """What ``ptxas -v`` printed for a one-kernel PTX file."""
    used = _USED.search(text)
    frame = _FRAME.search(text)
    if used is None or frame is None:
        raise UsageUnavailable("ptxas -v printed no register report")
    return BinaryUsage(
        registers=int(used.group(1)),
        stack_bytes=int(frame.group(1)),
        spill_store_bytes=int(frame.group(2)),
        spill_load_bytes=int(frame.group(3)),
        wgmma_serialized=_SERIALIZED in text,
    )


def cubin_usage(cubin: bytes) -> BinaryUsage:
    """Registers and stack of a cubin, from Triton's cuobjdump."""
    from triton import knobs

    with tempfile.TemporaryDirectory(prefix="ws_solver-usage-") as folder:
        path = os.path.join(folder, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        out = _run([knobs.nvidia.cuobjdump.path, "-res-usage", path])
    return with_loop_spills(parse_res_usage(out), cubin)


def with_loop_spills(usage: BinaryUsage, cubin: bytes) -> BinaryUsage:
    """`usage` with where its spill instructions sit, for a kernel that spills (the
    disassembler takes ~0.4 s); unchanged where it does not or the SASS cannot be read."""
    if not usage.spills:
        return usage
    try:
        return replace(usage, loop_spills=cubin_loop_spills(cubin))
    except UsageUnavailable:
        return usage


def cubin_loop_spills(cubin: bytes) -> LoopSpills:
    """Where a cubin's spill instructions sit, from the SASS of Triton's nvdisasm."""
    from triton import knobs

    with tempfile.TemporaryDirectory(prefix="ws_solver-sass-") as folder:
        path = os.path.join(folder, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        return loop_spills(_run([knobs.nvidia.nvdisasm.path, "-c", path], stderr=False))


def assembled_usage(backend: Any, ptx: str, options: Any, capability: int) -> BinaryUsage:
    """Assemble `ptx` with Triton's ``make_cubin`` (log on) and read what ptxas printed."""
    return assemble(backend, ptx, options, capability)[1]


def assemble(
    backend: Any, ptx: str, options: Any, capability: int, sass: bool = True
) -> tuple[bytes, BinaryUsage]:
    """`assembled_usage`, and the cubin itself (what the compile's own ptxas run would make of
    the same PTX: ``-v`` is always among Triton's flags, the log only printed here).
    ``sass=False``: without where the spill instructions sit (no disassembler run; the
    decision check reads it later, only where it decides: `cubin_loop_spills`)."""
    from triton import knobs

    printed = io.StringIO()
    with knobs.nvidia.scope(), contextlib.redirect_stdout(printed):
        knobs.nvidia.dump_ptxas_log = True
        cubin = backend.make_cubin(ptx, {}, options, capability)
    usage = parse_ptxas_log(printed.getvalue())
    return cubin, with_loop_spills(usage, cubin) if sass else usage


def cubin_key(ptx: str, capability: int, options: Any) -> str:
    """Digest of everything Triton's ``make_cubin`` output depends on: the PTX, the target,
    the compile options and the knobs and ptxas it reads. Equal keys, equal cubins; each
    process computes it with its own knobs, so a setting changed in one is a miss."""
    from triton import knobs
    from triton.backends.nvidia.compiler import get_ptxas

    try:
        fields = sorted((str(k), repr(v)) for k, v in vars(options).items())
    except TypeError:
        fields = [("options", repr(options))]
    h = hashlib.sha256()
    for part in (
        str(capability),
        repr(fields),
        repr(knobs.compilation.disable_line_info),
        repr(knobs.nvidia.disable_ptxas_opt),
        str(get_ptxas(capability).path),
        ptx,
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def ptx_usage(ptx: str, capability: int) -> BinaryUsage:
    """Assemble `ptx` with the ptxas Triton uses for `capability` and read ``-v``."""
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

    tool = get_ptxas(capability)
    arch = sm_arch_from_capability(capability)
    with tempfile.TemporaryDirectory(prefix="ws_solver-usage-") as folder:
        src = os.path.join(folder, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        out = _run([tool.path, "-v", f"--gpu-name={arch}", src, "-o", os.path.join(folder, "k.o")])
    return parse_ptxas_log(out)


def _run(command: list[str], stderr: bool = True) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageUnavailable(f"{os.path.basename(command[0])}: {e}") from e
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        name = os.path.basename(command[0])
        raise UsageUnavailable(f"{name} exited {done.returncode}: {tail[0]}")
    return done.stdout + (done.stderr if stderr else "")

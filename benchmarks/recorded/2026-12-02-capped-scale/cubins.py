"""One line per compiled variant of a `bench_kernels --dry-run` folder: its SASS's digest
(the cubin's own differs between checkouts: its line info names the source's path), ptxas's
registers and stack frame (STACK > 0: spilled) and the SASS's setmaxnreg values."""

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import triton

out = Path(sys.argv[1])


def dump(flag: str, path: str) -> str:
    return subprocess.run([tools / "cuobjdump", flag, path], capture_output=True, text=True).stdout


tools = Path(os.path.dirname(triton.__file__)) / "backends" / "nvidia" / "bin"
cubins = {
    hashlib.sha256(p.read_bytes()).hexdigest()[:16]: p for p in Path(f"{out}.c").rglob("*.cubin")
}
for row in json.loads((out / "results.json").read_text())["results"]:
    info = row.get("compile") or {}
    digest = info.get("binary")
    if digest not in cubins:
        print(f"{row['job']} | {info.get('error', 'no cubin')}")
        continue
    path = str(cubins[digest])
    usage = dump("-res-usage", path)
    res = re.search(r"REG:\d+ STACK:\d+", usage)
    sass = dump("-sass", path)
    caps = sorted(
        {int(v, 16) for v in re.findall(r"USETMAXREG\S* (?:UP\d+, )?(0x[0-9a-f]+)", sass)}
    )
    code = hashlib.sha256(sass.encode()).hexdigest()[:12]
    requested = ";".join(info.get("requested_registers") or []) or "-"
    regs = res.group(0) if res else "?"
    print(f"{row['job']} sass {code} | {regs} | requested {requested} | setmaxnreg {caps}")

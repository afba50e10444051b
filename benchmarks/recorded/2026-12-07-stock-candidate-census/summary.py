"""The census table: per file (target x Triton version), where the drop-in's `optimal` kernel
spills and stock's launchable kernel does not. Stock's kernel counts as built only when it
fits a block's shared memory (232,448 B): over that it fails at launch."""

import json
import sys
from pathlib import Path

SHARED = 232_448


def spilled(record: dict) -> int:
    p = record.get("ptxas") or {}
    return max(p.get("stack_bytes") or 0, p.get("spill_store_bytes") or 0)


def launchable(record: dict | None) -> bool:
    return bool(record and record.get("ok") and (record.get("shared_bytes") or 0) <= SHARED)


print(
    "| file | configs | stock launchable | stock over shared memory | optimal built |"
    " optimal spills | **spills where stock's launchable kernel does not** |"
    " optimal kept stock's kernel | optimal's binary is stock's |"
)
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
for path in sys.argv[1:]:
    by = {}
    for line in Path(path).read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "compile":
            by.setdefault(r["config"], {})[r["strategy"]] = r
    stock_ok = over = opt_ok = opt_spill = bad = kept = same = 0
    worst = []
    for key, v in sorted(by.items()):
        b, o = v.get("builtin"), v.get("optimal")
        stock_ok += launchable(b)
        over += bool(b and b.get("ok") and not launchable(b))
        if o and o.get("ok"):
            opt_ok += 1
            opt_spill += spilled(o) > 0
            kept += o.get("dropin_strategy") == "stock"
            same += bool(b and b.get("ok") and b.get("binary") == o.get("binary"))
            if spilled(o) and launchable(b) and not spilled(b):
                bad += 1
                worst.append(key)
    print(
        f"| {Path(path).name} | {len(by)} | {stock_ok} | {over} | {opt_ok} | {opt_spill} |"
        f" **{bad}** {' '.join(worst)} | {kept} | {same} |"
    )

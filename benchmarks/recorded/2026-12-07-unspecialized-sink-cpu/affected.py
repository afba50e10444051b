"""Which 3.9 sm_90 attention configs of the measured space change with 7c32090: for each,
optimal (this checkout's code) and builtin compiled; op sequence of optimal's TTGIR vs
builtin's; the drop-in's notes mentioning the overlap."""

import json
import pathlib
import re
import sys

from benchmarks.common.bench_compile import Job, compile_job
from corpus import configspace

configspace.register(configspace.space())
names = sys.argv[2:]
out = pathlib.Path(sys.argv[1])
res = {}


def ops(t):
    return re.findall(r"(?:= |^\s*)([a-z_]+\.[a-z_.]+)", t, re.M)


for n in names:
    fam, name = n.split(".", 1)
    rec = {}
    for strat in ("builtin", "optimal"):
        compiled, info = compile_job(Job(fam, name, strat), out / f"cache-{strat}", 90)
        if compiled is None:
            rec[strat] = {"error": str(info.get("error"))[:200]}
            continue
        d = info.get("dropin") or {}
        rec[strat] = {
            "binary": info.get("binary"),
            "ws": info.get("warp_specialize_ops"),
            "ops": ops(compiled.asm["ttgir"]),
            "notes": [x for x in json.dumps(d).split('"') if "overlap" in x][:4],
        }
    b, o = rec.get("builtin", {}), rec.get("optimal", {})
    same_ops = b.get("ops") is not None and b.get("ops") == o.get("ops")
    res[n] = {
        "stock_ws": b.get("ws"),
        "opt_ws": o.get("ws"),
        "same_ops_as_stock": same_ops,
        "same_binary": b.get("binary") == o.get("binary") and b.get("binary") is not None,
        "opt_binary": o.get("binary"),
        "notes": o.get("notes"),
        "err": o.get("error") or b.get("error"),
    }
    print(n, json.dumps(res[n]), flush=True)
(out / "affected.json").write_text(json.dumps(res, indent=1))

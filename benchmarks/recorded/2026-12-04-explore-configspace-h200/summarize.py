"""Per family: variants, verified, specialized (the built kernel has partition regions), fallbacks,
launches that differed, distinct binaries, from the explore run's results.json files
(summary.txt). The gemm_persistent rerun loaded the first call's builds from the cache, so its
rows carry no drop-in report ("no report"); the kernel's own partition regions still say
whether it is specialized."""

import collections
import json
from pathlib import Path

RUN = Path("benchmarks/results/2026-12-04-explore-configspace-h200")
total: collections.Counter = collections.Counter()
for family in ("gemm_tma", "gemm_fp8", "gemm_persistent", "attention_fwd"):
    rows = json.loads((RUN / family / "results.json").read_text())["results"]
    c: collections.Counter = collections.Counter()
    binaries, specialized_binaries = set(), set()
    for r in rows:
        verify, built = r.get("verify") or {}, r.get("compile") or {}
        dropin = built.get("dropin") or {}
        specialized = (built.get("partition_regions") or 0) > 0
        c["no report"] += not dropin
        c["n"] += 1
        c["passed"] += bool(verify.get("passed"))
        c["specialized"] += specialized
        c["fallback"] += bool(dropin.get("fallbacks"))
        c["nondet"] += (verify.get("nondeterministic_launches") or 0) > 0
        binaries.add(built.get("binary"))
        if specialized:
            specialized_binaries.add(built.get("binary"))
    c["distinct binaries"] = len(binaries)
    c["distinct specialized binaries"] = len(specialized_binaries)
    print(family, dict(c))
    total.update(c)
print("total", dict(total))

"""The sweep's figures beyond bench_measured's summary: by family form, without the attention
families (their launches were not routed to measured mode at the revision that ran, b9d1718:
fixed in 01ecd70), and over the distinct binaries (optimal's cubin not stock's).

    python benchmarks/recorded/2026-12-07-measured-space-h100/analysis.py RESULTS.jsonl...
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from benchmarks.analysis.configspace_sweep import geomean
from benchmarks.gpu import measured_summary as ms


def line(label: str, rows: list) -> str:
    s = ms.speedups(rows)
    slower = sum(ms.optimal_slower(r) for r in rows)
    behind = sum(ms.measured_behind(r) for r in rows)
    out = [f"{label}: configs {len(rows)}"]
    for k in ("optimal", "measured", "best"):
        g, n = s[k]
        out.append(f"{k} {g:.3f} (n {n})" if g else f"{k} - (n {n})")
    out.append(f"optimal >3% slower {slower}, measured >2% behind {behind}")
    return "; ".join(out)


def main(paths: list[str]) -> None:
    raw = ms.load(Path(p) for p in paths)
    for version in sorted({r.get("triton") for r in raw}):
        rows = [r for r in raw if r.get("triton") == version]
        pairs = [(r, ms.config_row(r)) for r in rows]
        print(f"## Triton {version}")
        print(line("all", [c for _, c in pairs]))
        print(line("GEMM families only", [c for r, c in pairs if "attention" not in r["family"]]))
        for form in ("host", "indesc", "pointer"):

            def of_form(family: str, form: str = form) -> bool:
                if form == "indesc":
                    return family.endswith("_indesc")
                if form == "pointer":
                    return family.endswith("_pointer") or family == "gemm_pointer"
                return not family.endswith(("_indesc", "_pointer")) and family != "gemm_pointer"

            print(line(f"form {form}", [c for r, c in pairs if of_form(r["family"])]))
        distinct = [
            c
            for r, c in pairs
            if (r.get("optimal") or {}).get("binary") != (r.get("stock") or {}).get("binary")
        ]
        print(line("optimal's binary not stock's", distinct))
        wins = [x for c in distinct if (x := c.ratio("optimal")) is not None]
        print(
            f"  optimal/stock on distinct binaries: {len(wins)} timed, "
            f"{sum(x > 1.03 for x in wins)} > 1.03, {sum(x < 0.97 for x in wins)} < 0.97, "
            f"range {min(wins):.3f}-{max(wins):.3f}, geomean {geomean(wins):.3f}"
        )
        used = Counter(
            ((r.get("optimal") or {}).get("strategy_used"), (r.get("optimal") or {}).get("rule"))
            for r, _ in pairs
        )
        print("  optimal built:", used.most_common())
        picks = Counter((r.get("measured") or {}).get("winner") for r, _ in pairs)
        print("  measured picked:", dict(picks))
        costs = [((r.get("measured") or {}).get("tuning") or {}) for r, _ in pairs]
        costs = [t for t in costs if t.get("total_s") is not None]
        for part in ("compile_s", "check_s", "bench_s", "total_s"):
            v = sorted(t[part] for t in costs)
            middle, most = v[len(v) // 2], v[-1]
            print(f"  first launch {part}: median {middle:.3f} max {most:.3f} (n {len(v)})")


if __name__ == "__main__":
    main(sys.argv[1:])

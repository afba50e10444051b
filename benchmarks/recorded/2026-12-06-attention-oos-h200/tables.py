"""The 8-warp attention decisions of the config space against what was measured, as
markdown: per configuration the model's decision and modeled gain (modeled36/39.json, written
by modeled.py from `corpus.configspace dump` TTGIR) beside the measured gain of a specialized
kernel over the unspecialized one (ours where `optimal` specialized, else stock's, else the
heuristic's), under Triton 3.6 and 3.9 (each the sweep's H200 run and this folder's H100
run: each config's times come from one run). From the repository root:

    python3 benchmarks/recorded/2026-12-06-attention-oos-h200/tables.py > decisions.md
"""

import json
import sys

RESULTS = "benchmarks/results"
HERE = f"{RESULTS}/2026-12-06-attention-oos-h200"
SWEEP = f"{RESULTS}/2026-12-04-configspace-h200"
RUNS = {
    "3.6": [
        (f"{SWEEP}/triton36-persistent-attention/results.json", "H200, sweep"),
        (f"{HERE}/attn36/results.json", "H100, out of sample"),
    ],
    "3.9": [
        (f"{SWEEP}/triton39-persistent-attention/results.json", "H200, sweep"),
        (f"{HERE}/attn39/results.json", "H100, out of sample"),
    ],
}


def load(path: str):
    with open(path) as f:
        return json.load(f)


def measured(path: str) -> dict:
    rows: dict = {}
    for r in load(path)["results"]:
        if r["kernel"] != "attention_fwd":
            continue
        c, b = r["compile"] or {}, r.get("bench") or {}
        spec = (c.get("warp_specialize_ops") or 0) > 0
        rows.setdefault(r["config"], {})[r["strategy"]] = (b.get("ms"), spec)
    return rows


def specialized_ms(times: dict) -> float | None:
    """Ours where `optimal` specialized, else stock's, else the heuristic's."""
    for strategy in ("optimal", "builtin", "heuristic"):
        ms, spec = times.get(strategy, (None, False))
        if spec and ms:
            return ms
    return None


def fmt(x: float | None) -> str:
    return "" if x is None else f"{x:+.1%}"


HEADER = (
    "| config | run | model specializes | modeled gain | measured gain of a specialized "
    "kernel | decision |\n|---|---|---|--:|--:|---|"
)


def main() -> None:
    for version, runs in RUNS.items():
        modeled = load(f"{HERE}/modeled{version.replace('.', '')}.json")
        print(f"\n## Triton {version}\n\n{HEADER}")
        right = wrong = 0
        for path, run in runs:
            for cfg, times in sorted(measured(path).items()):
                if cfg not in modeled:
                    continue
                m = modeled[cfg]
                none, spec_ms = (times.get("none") or (None,))[0], specialized_ms(times)
                gain = (m["none"] - m["optimal"]) / m["optimal"] if m["optimal_spec"] else None
                meas = none / spec_ms - 1 if none and spec_ms else None
                verdict = ""
                if meas is not None and abs(meas) > 0.03:
                    ok = m["optimal_spec"] == (meas > 0)
                    right, wrong = right + ok, wrong + (not ok)
                    verdict = "right" if ok else "**wrong**"
                yes = "yes" if m["optimal_spec"] else "no"
                print(f"| {cfg} | {run} | {yes} | {fmt(gain)} | {fmt(meas)} | {verdict} |")
        print(
            "\nWhere a specialized and the unspecialized kernel differ by more than 3%: "
            f"decision right {right} of {right + wrong}."
        )


if __name__ == "__main__":
    sys.exit(main())

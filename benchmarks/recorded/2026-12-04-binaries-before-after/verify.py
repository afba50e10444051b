"""Compile every sm_90 corpus configuration through the drop-in and write one JSON line per
job with the sha256 (16 hex digits) of its cubin, PTX and final TTGIR.

    python verify.py REPO OUT.jsonl [STRATEGIES]

REPO is the checkout whose `ws_solver` is measured. `corpus/` and the compile helper come from
one common copy for every REPO compared (kernel source paths end up in the binaries' line
info), the folder $VERIFY_COMMON: a copy of a checkout's `corpus/` and `benchmarks/`. The run
recorded here used f97153f's, where the helper was `benchmarks/bench_compile.py`; today's is
`benchmarks/common/bench_compile.py`. Resumable: jobs already in OUT.jsonl are skipped.
"""

import hashlib
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

STRATEGIES = ["optimal", "heuristic", "optimal~tt1", "heuristic~wg0", "triton_overlap"]


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()[:16]


def compile_helper():
    for name in ("benchmarks.common.bench_compile", "benchmarks.bench_compile"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise SystemExit("verify.py: no bench_compile under $VERIFY_COMMON/benchmarks")


def main() -> None:
    repo, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    strategies = sys.argv[3].split(",") if len(sys.argv) > 3 else STRATEGIES
    common = os.environ.get("VERIFY_COMMON", "/tmp/rwv/common")
    os.chdir(common)
    sys.path[:0] = [common, str(repo)]
    import ws_solver

    assert Path(ws_solver.__file__).resolve().is_relative_to(repo), ws_solver.__file__
    helper = compile_helper()
    index = json.loads((repo / "corpus/ttgir/index.json").read_text())
    configs = sorted({(e["kernel"], e["config"]) for e in index if e["target"] == "sm90"})
    done = set()
    if out.exists():
        done = {json.loads(line)["job"] for line in out.read_text().splitlines() if line.strip()}
    with tempfile.TemporaryDirectory(prefix="verify_") as tmp:
        for kernel, config in configs:
            for strategy in strategies:
                name = f"{kernel}.{config}.{strategy}"
                if name in done:
                    continue
                job = helper.Job(kernel, config, strategy)
                compiled, info = helper.compile_job(job, Path(tmp))
                used = (info.get("dropin") or {}).get("strategy_used")
                row = {"job": name, "error": info.get("error"), "used": used}
                if compiled is not None:
                    row.update({k: sha(compiled.asm[k]) for k in ("cubin", "ptx", "ttgir")})
                    notes = (getattr(compiled.metadata, "ws_solver", None) or {}).get("notes", [])
                    row["notes"] = list(notes)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(name, row.get("cubin"), row["error"], flush=True)


if __name__ == "__main__":
    main()

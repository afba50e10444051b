"""The model's decision and modeled II (`optimal` and `none`, summed over a kernel's loops) for
every 8-warp sm_90 attention configuration of the config space, from TTGIR dumped with
`python -m corpus.configspace dump --family attention_fwd --target sm90 --out DIR` under the
Triton version named (3.6: .venv, 3.9: .venv-triton3.9). From the repository root:

    python3 benchmarks/recorded/2026-12-06-attention-oos-h200/modeled.py 36 DIR OUT.json
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

version, dumps, out_path = sys.argv[1:4]
cli = {"36": ".venv/bin/ws-solver", "39": ".venv-triton3.9/bin/ws-solver"}[version]
out = {}
with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "report.json")
    for path in sorted(glob.glob(f"{dumps}/attention_fwd.*_w8_*.sm90.ttgir")):
        config = os.path.basename(path).split(".")[1]
        row = {}
        for strategy in ("optimal", "none"):
            args = [cli, "partition", path, "--strategy", strategy, "--json", report]
            subprocess.run([*args, "-o", os.devnull, "-q"], check=True)
            with open(report) as f:
                loops = json.load(f)["loops"]
            row[strategy] = sum(loop["ii"] for loop in loops)
            row[f"{strategy}_spec"] = any(loop["specialized"] for loop in loops)
        out[config] = row
with open(out_path, "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
print(len(out), "configurations")

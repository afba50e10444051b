#!/usr/bin/env bash
# issue 35: reference runs (seed 0, SECS wall, W workers, P at a time) of every loop that no
# default-limit run proved optimal. Needs scale35a.sh's /tmp/res/scale35 on this machine.
set -uo pipefail
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
SECS=${1:-150}; W=${2:-4}; P=${3:-4}
R=/tmp/res/scale35; D=$R/loops; mkdir -p $R/ref
python3 - $R/default.jsonl > $R/unproven.txt <<'PY'
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
loops = sorted({r["loop"] for r in rows})
proven = {r["loop"] for r in rows if r.get("status") == "OPTIMAL"}
ok = {r["loop"] for r in rows if r["run"] == "heuristic" and (r["single_valid"] or r["valid"])}
print("\n".join(l for l in loops if l not in proven))
PY
echo "unproven: $(wc -l < $R/unproven.txt)"; t0=$(date +%s)
cat $R/unproven.txt | xargs -P $P -I{} sh -c 'python3 -m benchmarks.cpu.bench_scale_families reference '$D'/{} '$SECS' '$W' > '$R'/ref/{}.jsonl 2> '$R'/ref/{}.err'
echo "references in $(( $(date +%s) - t0 )) s"
cat $R/ref/*.jsonl > $R/reference.jsonl; cat $R/default.jsonl $R/reference.jsonl > $R/all.jsonl
python3 -m benchmarks.cpu.bench_scale_families report $R/all.jsonl > $R/results.md; tail -6 $R/results.md
tar -C /tmp/res -czf $OUT/scale35b.tgz scale35/ref scale35/reference.jsonl scale35/all.jsonl scale35/results.md scale35/unproven.txt

#!/usr/bin/env bash
# Issue 35, 2026-12-06, this project's 2-core CPU machine: the 16 sm_100 scale-family loops and
# 4 out-of-sample loops of bench_scale's own family, `measure` (heuristic row + seeds 0-4 at 10
# deterministic s, 2 workers), two loops at a time. From the repository root.
set -euo pipefail
L=/tmp/loops; O=/tmp/oos; E=${1:-/tmp/ev}; mkdir -p $E
python -m benchmarks.cpu.bench_scale_families dump $L --only sm100
python -c "
from pathlib import Path
from benchmarks.cpu import bench_scale as b
b.generate([b.Instance(t, u, 'sm100') for t, u in
            [('d16_m128n16_w4_s2', 3), ('d16_m128n16_w4_s2', 5),
             ('d32_m128n32_w4_s2', 3), ('d32_m128n32_w4_s2', 4)]], Path('$O'))"
sha256sum $L/*.sm100.ttgir $O/* | sed "s#$L/##; s#$O/##" > $E/loops.sha256
ls -S $L/*.sm100.ttgir $O/* | xargs -P 2 -n 1 sh -c \
  'python -m benchmarks.cpu.bench_scale_families measure $0 5 10 0 --workers=2 > '$E'/$(basename $0 .ttgir).jsonl'
cat $E/*.jsonl > $E/rows.jsonl

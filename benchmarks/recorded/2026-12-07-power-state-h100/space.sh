#!/usr/bin/env bash
# The GPU machine, ortools wheels carried in .whl/. Measured mode with its default candidates,
# each timed batch after 100 ms of the same kernel (measured.WARM_MS), over a third of the 165
# sm_90 configs of benchmarks/gpu/measured_space.json (space_third$THIRD.json: every third
# config, chosen before timing; the device time left did not allow all), fresh caches; the
# bench times its distinct binaries the same way (--warm-ms, measured's default). Resumable
# on a warm machine: results under /tmp/wsp$VERSION, copied to $OUT after each call; each
# call stops the bench after LIMIT seconds. On a fresh machine, RESUME_FROM=a committed
# results file seeds the results (third 2 of 3.6 stopped at 22 of 55:
# RESUME_FROM=benchmarks/results/2026-12-07-power-state-h100/space-triton36.jsonl THIRD=2).
# Usage: [THIRD=0] space.sh [VERSION] (36, or 39 after gpu_triton39.sh).
VERSION=${1:-36}
LIMIT=${LIMIT:-540}
if [ "$VERSION" = 36 ]; then source benchmarks/gpu/gpu_env.sh || exit 2; fi
mkdir -p /tmp/wsp$VERSION/out
if [ -n "${RESUME_FROM:-}" ] && [ ! -s /tmp/wsp$VERSION/out/results.jsonl ]; then
  cp "$RESUME_FROM" /tmp/wsp$VERSION/out/results.jsonl
fi
timeout -s INT "$LIMIT" python3 -m benchmarks.gpu.bench_measured \
  --space $(dirname "$0")/space_third${THIRD:-0}.json --part 1/1 --out /tmp/wsp$VERSION/out --jobs 14 \
  --overlap --cache-root /tmp/wsp$VERSION/cache --rounds 5 --batch-ms 25 --resume --stall-s 90 \
  > /tmp/wsp$VERSION/log-$(date +%s).txt 2>&1
echo "bench rc $?"
tail -n 3 /tmp/wsp$VERSION/log-*.txt | tail -n 4
wc -l /tmp/wsp$VERSION/out/*.jsonl
tar czf "$OUT/wsp$VERSION.tgz" -C /tmp wsp$VERSION/out $(cd /tmp && ls wsp$VERSION/log-*.txt)

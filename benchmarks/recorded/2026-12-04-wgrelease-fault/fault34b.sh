#!/usr/bin/env bash
set -uo pipefail
source benchmarks/gpu/gpu_env.sh || exit 2
[ -d /tmp/site/ortools ] || { mkdir -p /tmp/site && xz -dc .ort/ortools-site.tar.xz | tar -C /tmp/site -x; }
export PYTHONPATH=/tmp/site:$PYTHONPATH
python3 -c 'import triton, torch; print(triton.__version__, torch.__version__)'
ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null; which compute-sanitizer cuobjdump nvdisasm 2>/dev/null
export OUT_DIR=/tmp/fault; mkdir -p $OUT_DIR
CUDA_LAUNCH_BLOCKING=1 timeout 420 python3 benchmarks/recorded/2026-12-04-wgrelease-fault/fault34b.py
find $OUT_DIR -name cache -prune -o -type f -print | head -80 | xargs ls -la | awk '{print $5, $9}' | head -70
tar -C /tmp --exclude=cache -czf $OUT/fault34b.tgz fault

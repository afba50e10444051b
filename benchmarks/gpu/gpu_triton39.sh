# Sourced on the GPU machine, from the repository root, after benchmarks/gpu/gpu_env.sh, once the
# two parts of the slim Triton 3.9.0 (../shared/tools/slim_triton.sh 3.9.0 "$PWD/.tri") have
# arrived: part00 copied to /tmp/tri by an earlier call, part01 carried as .tri/b by this one.
# Unpacks Triton 3.9.0 once into /tmp/site-tri and puts it ahead of the machine's Triton 3.6.0.
#
# ptxas: Triton 3.9 assembles sm_90 kernels with its CUDA 13 ptxas ("ptxas-blackwell", 13.4),
# which the slim wheel leaves out. Carry it too, or the run times another compiler: with the
# wheel's CUDA 12.9 ptxas ws_solver's attention d128 ran 11% slower (537 against 597 TFLOP/s,
# 2026-12-01-triton39-ptxas). Pack it once here, carry .tri/c with an earlier call:
#   mkdir -p .tri/c && xz -9 -c "$(python -c 'import triton,os;print(os.path.dirname(triton.__file__))')/backends/nvidia/bin/ptxas-blackwell" > .tri/c/ptxas-blackwell.xz
#   (on the GPU machine)  mkdir -p /tmp/tri && xz -dc .tri/c/ptxas-blackwell.xz > /tmp/tri/ptxas-blackwell && chmod +x /tmp/tri/ptxas-blackwell
# Without /tmp/tri/ptxas-blackwell this falls back to the 12.9 one and says so.
# Returns 2 when a part is missing.
if [ ! -d /tmp/site-tri/triton ]; then
  if [ ! -f /tmp/tri/part00 ] || [ ! -f .tri/b/part01 ]; then
    echo "gpu_triton39.sh: a part of the slim Triton 3.9.0 is missing" >&2
    return 2
  fi
  mkdir -p /tmp/site-tri
  cat /tmp/tri/part00 .tri/b/part01 | xz -d | (cd /tmp/site-tri && tar x) || return 2
fi
export PYTHONPATH=/tmp/site-tri${PYTHONPATH:+:$PYTHONPATH}
if [ -x /tmp/tri/ptxas-blackwell ]; then
  export TRITON_PTXAS_BLACKWELL_PATH=/tmp/tri/ptxas-blackwell
elif [ -x /tmp/site-tri/triton/backends/nvidia/bin/ptxas-blackwell ]; then
  # ../shared/tools/slim_triton.sh now keeps it in the wheel (and links ptxas to it)
  export TRITON_PTXAS_BLACKWELL_PATH=/tmp/site-tri/triton/backends/nvidia/bin/ptxas-blackwell
else
  echo "gpu_triton39.sh: no /tmp/tri/ptxas-blackwell; timing with CUDA 12.9's ptxas, not 3.9's own" >&2
  export TRITON_PTXAS_BLACKWELL_PATH=/tmp/site-tri/triton/backends/nvidia/bin/ptxas
fi
# 3.9's default (fusion on, as in 3.6), set to silence its warning.
export TRITON_DEFAULT_FP_FUSION=1

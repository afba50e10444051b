# Sourced on the GPU machine, from the repository root, after benchmarks/gpu_env.sh, once the
# two parts of the slim Triton 3.9.0 (../shared/tools/slim_triton.sh 3.9.0 "$PWD/.tri") have
# arrived: part00 copied to /tmp/tri by an earlier call, part01 carried as .tri/b by this one.
# Unpacks Triton 3.9.0 once into /tmp/site-tri and puts it ahead of the machine's Triton 3.6.0.
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
export TRITON_PTXAS_BLACKWELL_PATH=/tmp/site-tri/triton/backends/nvidia/bin/ptxas
# 3.9's default (fusion on, as in 3.6), set to silence its warning.
export TRITON_DEFAULT_FP_FUSION=1

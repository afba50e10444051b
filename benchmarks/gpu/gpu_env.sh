# Sourced by the GPU-machine scripts (gpu_run.sh, profile_gpu.sh), from the repository root:
# installs the carried wheels (.whl/: ortools and what it needs that the machine lacks) into
# /tmp/site, puts them and the repository on PYTHONPATH, and uses the carried plan cache
# (.plans/) when there is one. Returns 2 when the wheels do not install.
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || return 2
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
if [ -d .plans ]; then export WS_SOLVER_CACHE_DIR=${WS_SOLVER_CACHE_DIR:-$PWD/.plans}; fi

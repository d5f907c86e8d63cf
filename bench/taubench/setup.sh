#!/bin/sh
# The parity bench's own venv: toolscore (editable), a checkout of tau-bench (git-ignored,
# cloned from GitHub, or from TAU_BENCH_SRC) installed editable
# WITHOUT its dependencies, and pydantic (tau_bench.types needs it). tau-bench's other
# dependencies (litellm, the model SDKs) serve its LLM user and agents, which the bench never
# runs: tau_parity.py registers a stub `litellm` module so that tau_bench.envs.base imports.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# TAU_BENCH_SRC: a local clone to copy instead of cloning from GitHub (the code is all it needs).
if [ ! -d "$here/tau-bench" ]; then
  if [ -n "${TAU_BENCH_SRC:-}" ]; then
    # a local clone may lack the large historical_trajectories/ files: check out the code only
    git clone --quiet --no-checkout "$TAU_BENCH_SRC" "$here/tau-bench"
    git -C "$here/tau-bench" checkout HEAD -- tau_bench setup.py README.md LICENSE
  else
    git clone --quiet https://github.com/sierra-research/tau-bench "$here/tau-bench"
  fi
fi
python3 -m venv "$here/.venv"
"$here/.venv/bin/python" -m pip install --quiet --upgrade pip
"$here/.venv/bin/python" -m pip install --quiet -e "$root"
"$here/.venv/bin/python" -m pip install --quiet --no-deps -e "$here/tau-bench"
"$here/.venv/bin/python" -m pip install --quiet 'pydantic>=2'
# tau_bench/__init__.py imports litellm (for the LLM user): stand a stub in, as tau_parity.py does
"$here/.venv/bin/python" -c "import sys, types; sys.modules['litellm'] = types.ModuleType('litellm'); sys.modules['litellm'].completion = None; import tau_bench.types, toolscore; print('ready:', '$here/tau-bench')"

#!/bin/sh
# The tau2 parity bench's own venv (bench/tau2/.venv, git-ignored): toolscore (editable) and
# tau2-bench installed editable WITHOUT its dependencies, plus only what its domains and its
# evaluator import (pydantic, loguru, addict, deepdiff, docstring-parser, python-dotenv, toml,
# PyYAML, pandas, numpy). litellm and the model SDKs serve its LLM agents and user simulator,
# which the bench never runs: tau2_parity.py never imports them (nor tau2/__init__.py).
#
#   sh bench/tau2/setup.sh [CHECKOUT]
#
# CHECKOUT (or $TAU2_CHECKOUT): a tau2-bench source tree to use as it is; without one, a
# clone from GitHub into bench/tau2/tau2-bench (git-ignored). tau2 needs Python >= 3.12
# ($PYTHON, default python3.12).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
checkout=${1:-${TAU2_CHECKOUT:-}}
if [ -z "$checkout" ]; then
  checkout="$here/tau2-bench"
  [ -d "$checkout" ] || git clone --quiet https://github.com/sierra-research/tau2-bench "$checkout"
fi
checkout=$(cd "$checkout" && pwd)
"${PYTHON:-python3.12}" -m venv "$here/.venv"
py="$here/.venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
# the pure-Python build: an editable compiled build would put extension modules in src/
TOOLSCORE_BUILD=pure-python "$py" -m pip install --quiet -e "$root"
# setuptools leaves src/toolscore.egg-info behind; on PYTHONPATH=src it would shadow the
# metadata of the toolscore installed in the project's own venv (its entry points)
rm -rf "$root/src/toolscore.egg-info"
"$py" -m pip install --quiet --no-deps -e "$checkout"
"$py" -m pip install --quiet 'pydantic>=2' loguru addict deepdiff docstring-parser \
  python-dotenv toml PyYAML pandas numpy
echo "$checkout" > "$here/.venv/tau2-checkout"
# tau2/__init__.py imports its agents and so litellm: the bench (and toolscore's generated
# modules) import tau2's modules under an empty `tau2` package instead, as here
"$py" -c "
import sys, types
package = types.ModuleType('tau2'); package.__path__ = ['$checkout/src/tau2']; sys.modules['tau2'] = package
import toolscore, tau2.evaluator.evaluator_env, tau2.evaluator.evaluator_communicate
print('ready:', '$checkout')"

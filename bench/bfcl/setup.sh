#!/bin/sh
# The benchmark's own venv: toolscore (editable) and BFCL's checker, which ships BFCL's data.
# bfcl-eval is installed without its dependencies (model SDKs, torch, ...): its AST checker
# needs only filelock, and the one module that pulls the rest is replaced by a stub
# (bfcl_stub/model_config.py, registered by bfcl_checker.py).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python3 -m venv "$here/.venv"
"$here/.venv/bin/python" -m pip install --quiet --upgrade pip
"$here/.venv/bin/python" -m pip install --quiet -e "$root"
"$here/.venv/bin/python" -m pip install --quiet --no-deps bfcl-eval filelock
# mpmath: BFCL's MathAPI (multi-turn categories, parity_multiturn.py) imports it
"$here/.venv/bin/python" -m pip install --quiet "mpmath==1.3.0"
"$here/.venv/bin/python" -c "import bfcl_eval, toolscore; print('ready:', bfcl_eval.__path__[0])"

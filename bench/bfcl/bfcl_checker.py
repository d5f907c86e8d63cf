"""BFCL's AST checker, importable without toolscore (the lean runner must not pay for it).

BFCL's checker lives only in `bench/bfcl/.venv` (made by `bench/bfcl/setup.sh`), so it is
imported dynamically: mypy and the project's venv never see it. Its module
`bfcl_eval.constants.model_config` imports every model SDK; `load_checker` registers the stub
in `bfcl_stub/model_config.py` under that name first (see its docstring).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
STUB = HERE / "bfcl_stub" / "model_config.py"
STUB_NAME = "bfcl_eval.constants.model_config"
MODEL = "toolscore-parity"
"""The model name handed to BFCL's checker (the stub gives every name the same config)."""


def load_checker() -> tuple[ModuleType, ModuleType, Any]:
    """BFCL's AST checker, its utils module, and its `Language.PYTHON`, with the stub in place."""
    if STUB_NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(STUB_NAME, STUB)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load the stub {STUB}")
        stub = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(stub)
        sys.modules[STUB_NAME] = stub
    try:
        checker = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
        utils = importlib.import_module("bfcl_eval.utils")
        enums = importlib.import_module("bfcl_eval.constants.enums")
    except ImportError as error:
        raise SystemExit(
            f"BFCL's checker is not importable ({error}); run bench/bfcl/setup.sh and use "
            "bench/bfcl/.venv/bin/python"
        ) from None
    return checker, utils, enums.Language.PYTHON

"""Which build of toolscore runs: the compiled accelerator or the plain Python modules.

Where a C compiler was present at install time, some modules (pyproject.toml, `[tool.toolscore]
compiled`) also exist as Cython-compiled extensions beside their .py sources, and Python's
import system prefers those. Setting `TOOLSCORE_PURE_PYTHON=1` before toolscore is imported
runs the .py sources instead: importing this module (toolscore/__init__.py does it first)
then puts a finder at the head of `sys.meta_path` that loads toolscore's submodules from
source only. Worker processes inherit the environment variable, and so the choice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module
from importlib.machinery import (
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    FileFinder,
    ModuleSpec,
    SourceFileLoader,
)
from types import ModuleType

PURE_PYTHON = "TOOLSCORE_PURE_PYTHON"
"""The environment variable that forces the pure-Python modules (any value but "" and "0")."""


class SourceOnlyFinder:
    """Finds toolscore's submodules among .py files only, so that a compiled extension lying
    beside one is never loaded; every other module is left to the usual finders. (A meta path
    finder needs only `find_spec`; importlib.abc would cost the start-up 13 ms.)"""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if not fullname.startswith("toolscore.") or path is None:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(fullname)
            if spec is not None and spec.loader is not None:
                return spec
        return None


def pure_python_forced() -> bool:
    """True when the environment asks for the pure-Python modules."""
    return os.environ.get(PURE_PYTHON, "") not in ("", "0")


def build_kind() -> str:
    """The string "compiled" when the scoring modules in use were loaded from compiled
    extensions, "pure-python" when they run from their .py sources (no compiler at install time, or
    `TOOLSCORE_PURE_PYTHON=1`). It tells what was loaded, not what was built."""
    import_module("toolscore.scoring.case")  # the scoring path, so that there is one to judge
    for name, module in list(sys.modules.items()):
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if name.startswith("toolscore.") and str(origin).endswith(tuple(EXTENSION_SUFFIXES)):
            return "compiled"
    return "pure-python"


if pure_python_forced() and not any(isinstance(f, SourceOnlyFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, SourceOnlyFinder())

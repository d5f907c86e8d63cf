"""Load a script that writes fixtures (tests/formats/make_*.py) as a module, by its path: the
tests compare what it builds with the committed files."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """The script at `path`, run as a module named after its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

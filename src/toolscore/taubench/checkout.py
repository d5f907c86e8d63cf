"""Import parts of a tau-bench checkout at replay time: a domain's Tool classes and its data
loader, by path, without running tau-bench's package `__init__` files (they import its LLM
user and agents, and so litellm and the model SDKs, which replay never needs).

This is the only module that runs the user's tau-bench code, and only the adapter modules
that `toolscore import tau-bench` writes call it, so only under `score --env`.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import Any


def _package(name: str, path: Path) -> None:
    """Register an empty package `name` whose submodules are found in `path`, unless a
    package of that name is imported already (tau-bench itself, installed)."""
    if name in sys.modules:
        return
    package = types.ModuleType(name)
    package.__path__ = [str(path)]
    sys.modules[name] = package


def domain_module(checkout: str, domain: str, part: str) -> types.ModuleType:
    """`tau_bench.envs.DOMAIN.PART` (`tools` or `data`) of the checkout at `checkout`."""
    root = Path(checkout) / "tau_bench"
    _package("tau_bench", root)
    _package("tau_bench.envs", root / "envs")
    _package(f"tau_bench.envs.{domain}", root / "envs" / domain)
    return importlib.import_module(f"tau_bench.envs.{domain}.{part}")


def tool_classes(checkout: str, domain: str) -> dict[str, Any]:
    """The domain's Tool classes (its `ALL_TOOLS`), by the name their `get_info()` gives."""
    module = domain_module(checkout, domain, "tools")
    return {tool.get_info()["function"]["name"]: tool for tool in module.ALL_TOOLS}


def load_data(checkout: str, domain: str) -> Any:
    """The domain's initial data, as its own `load_data()` reads it."""
    return domain_module(checkout, domain, "data").load_data()

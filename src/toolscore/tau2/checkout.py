"""Run a tau2-bench checkout's own domain code at replay time: its `get_environment()` as
the initial state, a tool call as its `Environment.make_tool_call`, the compared form as its
databases' `model_dump()`. Imported by path without running the package `__init__` of
`tau2` (it imports the LLM agents and user simulator, and so litellm, which replay never
needs).

This is the only module that runs the user's tau2 code, and only the modules that `toolscore
import tau2-bench` writes call it, so only under `score --env`.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any


def _package(name: str, path: Path) -> None:
    """Register an empty package `name` whose submodules are found in `path`, unless a
    package of that name is imported already (tau2 itself, installed)."""
    if name in sys.modules:
        return
    package = types.ModuleType(name)
    package.__path__ = [str(path)]
    sys.modules[name] = package


def environment_module(checkout: str, domain: str) -> types.ModuleType:
    """`tau2.domains.DOMAIN.environment` of the checkout at `checkout`."""
    _package("tau2", Path(checkout) / "src" / "tau2")
    return importlib.import_module(f"tau2.domains.{domain}.environment")


def load_environment(checkout: str, domain: str) -> Any:
    """The domain's `Environment` as tau2's evaluator builds it (`get_environment()`: the
    domain's databases loaded from the checkout's data folder)."""
    return environment_module(checkout, domain).get_environment()


def call_tool(environment: Any, name: str, kwargs: dict[str, Any]) -> Any:
    """One assistant tool call as tau2's `Environment.get_response` makes it (the call, then
    `sync_tools()`), its result as the JSON of the tool message tau2 would record; an
    exception propagates (toolscore records it as the call's error and, under `on_error:
    keep`, keeps what the tool changed, as tau2 does)."""
    result = environment.make_tool_call(name, requestor="assistant", **kwargs)
    environment.sync_tools()
    text = environment.to_json_str(result)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def snapshot(environment: Any) -> dict[str, Any]:
    """The compared form of a state: the agent's and the user's databases as plain JSON, the
    two things tau2's DB check hashes (`get_db_hash`, `get_user_db_hash`)."""
    return {
        "db": _dump(environment.tools),
        "user_db": _dump(environment.user_tools),
    }


snapshot.shares_nothing = True  # type: ignore[attr-defined]
"""`model_dump` builds new containers: nothing of the state is shared (docs/formats.md 9.6)."""


def _dump(toolkit: Any) -> Any:
    database = getattr(toolkit, "db", None) if toolkit is not None else None
    return None if database is None else database.model_dump(mode="json")

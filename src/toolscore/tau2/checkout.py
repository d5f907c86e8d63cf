"""Run a tau2-bench checkout's own domain code at replay time: its `get_environment()` as
the initial state, a tool call as its `Environment.make_tool_call`, the compared form as its
databases' `model_dump()`. Imported by path without running the package `__init__` of
`tau2` (it imports the LLM agents and user simulator, and so litellm, which replay never
needs).

This is the only module that runs the user's tau2 code, and only the modules that `toolscore
import tau2-bench` writes call it, so only under `score --env`.
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import orjson


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


def restore(environment: Any, compared: Any, original: Any, initial: Any) -> bool:
    """Bring a used `environment` back to `original` (the initial one, never handed out)
    in place, from their compared forms (`snapshot`: `compared` of the used one, `initial`
    of the original): each database field whose JSON text differs is put back, for a field
    holding a dict (tau2's users, orders, reservations, ...) only the documents that differ,
    as deep copies of the original's, and the documents added are deleted. False (the
    environment is then dropped, and the next replay deep-copies the original) when the
    two cannot be matched so: a document removed or the documents reordered, a database
    that is not there on both sides, a compared form that is not `snapshot`'s."""
    if type(compared) is not dict or type(initial) is not dict or list(compared) != list(initial):
        return False
    for name, toolkit, pristine in (
        ("db", environment.tools, original.tools),
        ("user_db", environment.user_tools, original.user_tools),
    ):
        now, then = compared[name], initial[name]
        if now is None and then is None:
            continue
        database = getattr(toolkit, "db", None) if toolkit is not None else None
        source = getattr(pristine, "db", None) if pristine is not None else None
        if database is None or source is None or type(now) is not dict or type(then) is not dict:
            return False
        if list(now) != list(then) or not _restored(database, source, now, then):
            return False
    return True


def _restored(database: Any, source: Any, now: dict[str, Any], then: dict[str, Any]) -> bool:
    """Put back each field of `database` whose dump (`now`) differs from the original's
    (`then`), from `source`; False when a dict field lost or reordered its documents."""
    for field, value in now.items():
        before = then[field]
        if _same(value, before):
            continue
        current, original = getattr(database, field), getattr(source, field)
        if not (type(current) is dict and type(value) is dict and type(before) is dict):
            setattr(database, field, copy.deepcopy(original))
            continue
        names, kept = list(current), list(before)
        if names[: len(kept)] != kept or list(value) != names:
            return False
        for added in names[len(kept) :]:
            del current[added]
        for key in kept:
            if not _same(value[key], before[key]):
                current[key] = copy.deepcopy(original[key])
    return True


def _same(value: Any, before: Any) -> bool:
    """Whether two dumps are the same JSON, as tau2's hash of their text sees them: `2`
    and `2.0` apart (`==` alone would take them as equal)."""
    return bool(value == before) and orjson.dumps(value) == orjson.dumps(before)


def _dump(toolkit: Any) -> Any:
    database = getattr(toolkit, "db", None) if toolkit is not None else None
    return None if database is None else database.model_dump(mode="json")

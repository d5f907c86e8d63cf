"""BFCL's multi-turn state classes as a documents environment, at replay time (`--env`).

The module `toolscore import bfcl` writes for a multi-turn category (`bfcl_env.py`) holds one
function per BFCL method and hands every call to a `Runtime`. The replayed state is a dict
holding the involved classes' instances, built by the case's `bfcl_setup` call from the
entry's `initial_config` (as BFCL's `execute_multi_turn_func_call` builds them); a call
`method(args)` goes to whichever involved instance has that method (the last class listed,
when several do, as BFCL's name mapping does), and its result is the text BFCL records: a
string as it is, a dict as JSON, anything else as `str()`, an exception as `Error during
execution: ...`. Nothing is rolled back, as in BFCL. The classes come from the installed
`bfcl-eval` package, or from a module of the user's (`--classes-module`).
"""

from __future__ import annotations

import copy
import datetime
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from toolscore.bfcl.call_tree import Cursor, Instances, Tree, Trees

BFCL_EVAL = "bfcl-eval"
"""The default source of the classes: the installed `bfcl_eval` package."""

FORBIDDEN = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Method names BFCL refuses to run (its `execute_multi_turn_func_call`)."""

POSITIONAL = "*"
"""The argument key holding a call's positional arguments, in order (BFCL's Python calls
may pass them; a JSON call cannot)."""

WITHOUT_CALLS = "$turn_without_calls"
"""The snapshot key set when a turn had no calls, until the next call (BFCL fails a turn
whose ground truth has calls and where the model made none)."""


class Runtime:
    """Builds the instances, dispatches calls, and takes the compared snapshot."""

    share = True
    """Whether replays from the same setup share their calls (`call_tree`); off, every
    replay builds its instances and runs each of its calls."""

    def __init__(self, classes: str, base: str | None = None) -> None:
        self.source = classes
        self.base = Path(base) if base else Path.cwd()
        self._module: ModuleType | None = None
        self._paths: Mapping[str, str] = {}
        self._stateless: frozenset[str] = frozenset()
        self._methods: dict[type, tuple[str, ...]] = {}
        self._trees = Trees()

    def _class(self, name: str) -> type:
        if self.source == BFCL_EVAL:
            if not self._paths:
                config = importlib.import_module("bfcl_eval.constants.executable_backend_config")
                self._paths = config.CLASS_FILE_PATH_MAPPING
                self._stateless = frozenset(config.STATELESS_CLASSES)
            if name not in self._paths:
                raise ValueError(f"bfcl-eval has no state class {name!r}")
            cls = getattr(importlib.import_module(self._paths[name]), name)
        else:
            cls = getattr(self._user_module(), name)
        if not isinstance(cls, type):
            raise ValueError(f"{name!r} in {self.source} is not a class")
        return cls

    def _user_module(self) -> ModuleType:
        if self._module is None:
            if self.source.endswith(".py"):
                path = (self.base / self.source).resolve()
                name = f"_toolscore_bfcl_classes_{abs(hash(str(path)))}"
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise ValueError(f"cannot import {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
                self._module = module
            else:
                self._module = importlib.import_module(self.source)
        return self._module

    def setup(
        self, state: dict[str, Any], classes: list[str], config: Mapping[str, Any],
        long_context: bool,
    ) -> None:  # fmt: skip
        """Start a replay of the involved classes, built from the entry's initial
        configuration: in the tree of this setup's replays (`call_tree`) when sharing,
        kept beside the replay's own instances otherwise."""
        try:
            key = orjson.dumps([classes, config, long_context], option=orjson.OPT_SORT_KEYS)
        except TypeError:  # not JSON: nothing to key a tree by
            key = None
        tree = self._trees.get(key) if key is not None and self.share else None
        instances = None
        if tree is None:
            instances, methods = self._build(classes, config, long_context)

            def execute(instances: Instances, name: str, args: dict[str, Any]) -> str:
                return _execute(instances[methods[name]], name, args)

            tree = Tree(lambda: self._build(classes, config, long_context)[0], execute, methods)
            if key is not None and self.share:
                self._trees.add(key, tree)
        cursor = Cursor(tree, instances)
        if key is None or not self.share:
            cursor.node = None  # shares nothing: its own instances, run call by call
        state["methods"] = tree.methods
        state["cursor"] = cursor

    def _build(
        self, classes: list[str], config: Mapping[str, Any], long_context: bool
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """New instances of the involved classes, loaded from the configuration as BFCL
        loads them, and which instance has each method (the last class listed wins)."""
        instances: dict[str, Any] = {}
        methods: dict[str, str] = {}
        for name in classes:
            instance = self._class(name)()
            if name not in self._stateless and hasattr(instance, "_load_scenario"):
                instance._load_scenario(_copied(config.get(name, {})), long_context=long_context)
            instances[name] = instance
            methods.update(dict.fromkeys(self._public_methods(instance), name))
        return instances, methods

    def _public_methods(self, instance: Any) -> tuple[str, ...]:
        """The public methods of an instance, as BFCL lists them (once per class)."""
        cls = type(instance)
        if cls not in self._methods:
            members = inspect.getmembers(instance, predicate=inspect.ismethod)
            self._methods[cls] = tuple(m for m, _ in members if not m.startswith("_"))
        return self._methods[cls]

    def call(self, state: MutableMapping[str, Any], name: str, args: dict[str, Any]) -> str:
        """Run `name(args)` on the instance that has it; its result as BFCL records it. A
        call ends the mark of an earlier turn without calls (a conversation replays on)."""
        state.pop(WITHOUT_CALLS, None)
        if name in FORBIDDEN:
            return f"Error during execution: Function call {name} is not allowed."
        if name not in state.get("methods", {}):
            return f"Error during execution: name '{name}' is not defined"
        cursor: Cursor = state["cursor"]
        return cursor.call(name, args)

    def snapshot(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """Each instance's public attributes as JSON (what BFCL's state checker compares).
        Shared between replays in the same state: never to be changed by the caller."""
        cursor: Cursor | None = state.get("cursor")
        found = {} if cursor is None else cursor.snapshot(_snapshot)
        if WITHOUT_CALLS in state:
            found = {**found, WITHOUT_CALLS: state[WITHOUT_CALLS]}
        return found


def _snapshot(instances: Mapping[str, Any]) -> dict[str, Any]:
    """The compared form of instances: their public attributes as JSON."""
    return {
        name: {
            key: plain(value, (id(instance),))
            for key, value in vars(instance).items()
            if not key.startswith("_")
        }
        for name, instance in instances.items()
    }


def _execute(instance: Any, name: str, args: dict[str, Any]) -> str:
    """Run `name(args)` on an instance; its result as BFCL records it."""
    positional = args.pop(POSITIONAL, [])
    try:
        result = getattr(instance, name)(*positional, **args)
    except Exception as error:  # BFCL records every exception as the call's result
        return f"Error during execution: {error}"
    if isinstance(result, str):
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:  # as BFCL: a dict json cannot write is shown with str()
            return str(result)
    return str(result)


def _copied(config: Any) -> Any:
    """A private copy of a class's initial configuration (BFCL deep-copies it): through JSON
    when it is JSON, which is many times faster than `copy.deepcopy`."""
    try:
        return orjson.loads(orjson.dumps(config))
    except TypeError:
        return copy.deepcopy(config)


def plain(value: Any, ancestors: tuple[int, ...] = ()) -> Any:
    """A Python value as JSON that is equal exactly when BFCL's `==` finds the values equal,
    for the values BFCL's classes hold: objects as their public attributes (BFCL's `File` and
    `Directory` compare so), a link back to an enclosing object (a directory's `parent`) as
    a marker, dict keys as strings, sets sorted, dates as ISO text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(key): plain(item, ancestors) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item, ancestors) for item in value]
    if isinstance(value, set | frozenset):
        items = [plain(item, ancestors) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, datetime.date | datetime.time):
        return {"$datetime": value.isoformat()}
    if id(value) in ancestors:
        return {"$enclosing": type(value).__name__}
    if hasattr(value, "__dict__"):
        inner = (*ancestors, id(value))
        attributes = {
            key: plain(item, inner) for key, item in vars(value).items() if not key.startswith("_")
        }
        return {"$class": type(value).__name__, **attributes}
    return {"$repr": repr(value)}

"""What both kinds of state environment share: the block's constants, the fields and rules
every kind holds (`EnvironmentBase`), their validation, and the loading of the user's code.

`environment` (SQLite, and the loader that picks a kind) and `documents` both build on this
module, which imports neither of them. The tools module and the other functions an
environment names (`data`, `snapshot`, `error_predicate`) are the user's code: they are
imported here and nowhere else, and only when the user named an environment.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from types import ModuleType
from typing import Any, Literal, NamedTuple

from toolscore.core.values import show, suggest
from toolscore.errors import InputError, ReplayInterrupted
from toolscore.specs.loading import DEFAULT_TIMEOUT, timeout_problem
from toolscore.state.errors_policy import ErrorPolicy, load_policy, unknown_terminal
from toolscore.state.limits import exit_call

COMPARE_MODES = ("diff", "exact")
DEFAULT_NOW = datetime(2026, 1, 1, tzinfo=UTC)
"""The clock tools see when the environment does not set `now`."""
NUMBERS = ("numeric", "typed")


class ToolContext(NamedTuple):
    """What a tool may use besides the database, fixed per case so that replay is deterministic.

    `random` is seeded from a hash of the case id; every replay of the case (the agent's
    calls, a plan's calls) starts from the same seed and the same `now`.
    """

    now: datetime
    random: Random
    case_id: str


class Tool(NamedTuple):
    """A tool implementation: `function(db, **args)`, plus `ctx=` when it declares `ctx`."""

    name: str
    function: Callable[..., Any]
    takes_ctx: bool


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class EnvironmentBase:
    """What every kind of environment holds and does alike: where it was declared, its
    tools, how final states compare, the clock, the time limit and the error policy; the
    number rule, each case's fixed context, and which spec tools its tools module lacks."""

    config: Mapping[str, Any]
    base_dir: Path
    source: str
    tools_module: str
    tools: Mapping[str, Tool]
    compare: Literal["diff", "exact"]
    numbers: Literal["numeric", "typed"]
    """How numbers compare: as numbers, or keeping 2 and 2.0 apart."""
    now: datetime
    timeout: float
    """Seconds each tool call (and each setup statement) may run (`limits`)."""
    policy: ErrorPolicy
    """What counts as a tool's error, what it leaves, which tools end replay."""

    @property
    def typed(self) -> bool:
        """Whether `2` and `2.0` differ (`numbers: typed`)."""
        return self.numbers == "typed"

    def context(self, case_id: str) -> ToolContext:
        """The clock and the random source of one case, the same at every replay."""
        seed = int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big")
        return ToolContext(self.now, Random(seed), case_id)

    def lacking(self, names: Iterable[str]) -> tuple[str, ...]:
        """The given tool names (e.g. a spec's tools) that the tools module does not define."""
        return tuple(sorted(name for name in set(names) if name not in self.tools))


def shared_fields(
    config: Mapping[str, Any], base_dir: Path, source: str, fail: Callable[[str, str], InputError]
) -> dict[str, Any]:
    """The `EnvironmentBase` fields of a block, validated the same way for every kind: the
    comparison rules, the clock and the time limit, then the tools module (the user's code,
    imported) and the error policy."""
    compare = config.get("compare", "diff")
    if compare not in COMPARE_MODES:
        raise fail("compare", f"must be 'diff' or 'exact', got {show(compare)}")
    numbers = config.get("numbers", "numeric")
    if numbers not in NUMBERS:
        raise fail("numbers", f"must be 'numeric' or 'typed', got {show(numbers)}")
    now = parse_now(config.get("now", DEFAULT_NOW), fail)
    timeout = config.get("timeout", DEFAULT_TIMEOUT)
    problem = timeout_problem(timeout)
    if problem is not None:
        raise fail("timeout", problem)
    module, tools = import_tools(config["tools"], base_dir, fail)
    policy = load_policy(config, base_dir, fail, load_function)
    unknown_terminal(policy, tools, fail)
    return {
        "config": dict(config),
        "base_dir": base_dir,
        "source": source,
        "tools_module": module,
        "tools": tools,
        "compare": compare,
        "numbers": numbers,
        "now": now,
        "timeout": float(timeout),
        "policy": policy,
    }


def require_strings(
    config: Mapping[str, Any], fail: Callable[[str, str], InputError], **what: str
) -> None:
    """Refuse a block lacking one of the keys `what` names (each a non-empty string), saying
    what the key takes."""
    for key, takes in what.items():
        if not isinstance(config.get(key), str) or not config[key]:
            raise fail(key, f"required: {takes}")


def env_error(source: str) -> Callable[[str, str], InputError]:
    """The error builder for a key of the `environment` block in the file `source`."""

    def fail(key: str, message: str) -> InputError:
        return InputError(source, message, field=f"environment.{key}" if key else "environment")

    return fail


def refuse_unknown_keys(
    config: Mapping[str, Any], keys: tuple[str, ...], fail: Callable[[str, str], InputError]
) -> None:
    """An input error for the first key of the block that is not one of `keys`, with the
    nearest valid name suggested for a typo."""
    for key in config:
        if key not in keys:
            raise fail(str(key), f"unknown key{suggest(str(key), keys)} (keys: {', '.join(keys)})")


def parse_now(value: Any, fail: Callable[[str, str], InputError]) -> datetime:
    """The `now` key as an aware date-time (UTC when it names no zone)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise fail("now", f"not an ISO 8601 date-time: {show(value)}") from None
    if not isinstance(value, datetime):
        raise fail("now", f"must be an ISO 8601 date-time, got {show(value)}")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def import_tools(
    reference: str, base_dir: Path, fail: Callable[[str, str], InputError]
) -> tuple[str, dict[str, Tool]]:
    """Import the tools module (a dotted module name, or a path to a .py file)."""
    module = import_module(reference, base_dir, fail)
    tools = {
        name: Tool(name, function, _takes_ctx(function))
        for name, function in vars(module).items()
        if inspect.isfunction(function)
        and function.__module__ == module.__name__
        and not name.startswith("_")
    }
    if not tools:
        raise fail("tools", f"{reference!r} defines no tool functions")
    return reference, tools


def load_function(
    reference: Any, base_dir: Path, fail: Callable[[str, str], InputError], key: str
) -> Callable[..., Any]:
    """The function `module:function` (a module name or a .py path, then the function's
    name) of an environment key such as `data` or `error_predicate`; the user's code."""
    if not isinstance(reference, str) or ":" not in reference.strip(":"):
        raise fail(key, f"must be 'module:function', got {show(reference)}")
    module_ref, _, name = reference.rpartition(":")
    module = import_module(module_ref, base_dir, fail, key)
    function = getattr(module, name, None)
    if not callable(function):
        raise fail(key, f"{module_ref!r} has no function {name!r}")
    return function  # type: ignore[no-any-return]


def import_module(
    reference: str, base_dir: Path, fail: Callable[[str, str], InputError], key: str = "tools"
) -> ModuleType:
    """Import a module of the user's (a dotted module name, or a path to a .py file), with
    every failure one input error naming the environment key `key`."""
    is_path = reference.endswith(".py") or "/" in reference or "\\" in reference
    try:
        if is_path:
            return _import_file(base_dir / reference, lambda _, m: fail(key, m))
        if all(part.isidentifier() for part in reference.split(".")):
            with _importable_from(base_dir):
                return importlib.import_module(reference)
        raise fail(key, f"{reference!r} is neither a module name nor a .py path")
    except InputError:
        raise
    except SyntaxError as error:
        where = f" ({error.filename}:{error.lineno})" if error.filename else ""
        raise fail(key, f"cannot import {reference!r}: SyntaxError: {error.msg}{where}") from None
    except SystemExit as error:
        raise fail(
            key, f"cannot import {reference!r}: it called {exit_call(error)} on import"
        ) from None
    except KeyboardInterrupt:
        raise ReplayInterrupted(f"the import of the {key} module {reference!r}") from None
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise fail(key, f"cannot import {reference!r}: {type(error).__name__}: {message}") from None


def _import_file(path: Path, fail: Callable[[str, str], InputError]) -> ModuleType:
    if not path.is_file():
        raise fail("tools", f"no such file: {path}")
    name = "toolscore_env_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise fail("tools", f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        with _importable_from(path.parent):
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    """Let the tools module import its siblings while it is being imported."""
    entry = str(folder.resolve())
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        sys.path.remove(entry)


def _takes_ctx(function: Callable[..., Any]) -> bool:
    try:
        parameter = inspect.signature(function).parameters.get("ctx")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind is not inspect.Parameter.POSITIONAL_ONLY

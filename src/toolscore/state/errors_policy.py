"""How a suite defines a tool's error, and what an error leaves behind; where an episode ends.

Both environment kinds share these keys of the `environment` block:

- `on_error: rollback` (the default) undoes everything a call did when it fails; `keep` leaves
  whatever it changed before failing, as tau-bench does (its tools mutate the data in place
  and nothing is undone). Under `keep` nothing is ever undone, whatever stopped the call.
- `error_prefix: "Error:"` makes a string result that starts with the prefix the call's
  error, and `error_predicate: module:function` does the same for any result the function
  calls true; a tool may then return its error instead of raising it.
- `terminal_tools: [name, ...]`: replay ends after a call of one of these tools (the episode
  is over, as at tau-bench's `transfer_to_human_agents`); later calls are not replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from toolscore.core.values import show
from toolscore.errors import InputError

ON_ERROR = ("rollback", "keep")
POLICY_KEYS = ("on_error", "error_prefix", "error_predicate", "terminal_tools")

Fail = Callable[[str, str], InputError]
LoadFunction = Callable[[Any, Path, Fail, str], Callable[..., Any]]


class ToolReportedError(Exception):
    """A tool returned its error as a value (see `error_prefix`, `error_predicate`); the
    message is the value as the tool returned it, a non-string one as JSON text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ErrorPolicy(NamedTuple):
    """What counts as a tool's error, what it leaves, and which tools end an episode."""

    on_error: Literal["rollback", "keep"] = "rollback"
    prefix: str | None = None
    predicate: Callable[[Any], Any] | None = None
    terminal_tools: frozenset[str] = frozenset()

    @property
    def keeps(self) -> bool:
        """Whether a failed call's changes stay."""
        return self.on_error == "keep"

    def returned_error(self, result: Any) -> str | None:
        """The error a tool's result stands for, or None when the result is not an error.
        The predicate is the user's code: call this under the call's time limit."""
        if self.prefix is not None and isinstance(result, str) and result.startswith(self.prefix):
            return result
        if self.predicate is not None and self.predicate(result):
            if isinstance(result, str):
                return result
            try:
                return orjson.dumps(result, default=repr).decode()
            except TypeError:
                return repr(result)
        return None

    def describe(self) -> dict[str, Any]:
        """The keys set away from their defaults, for the report's header."""
        found: dict[str, Any] = {"on_error": self.on_error} if self.keeps else {}
        if self.prefix is not None:
            found["error_prefix"] = self.prefix
        if self.predicate is not None:
            found["error_predicate"] = getattr(self.predicate, "__qualname__", "?")
        if self.terminal_tools:
            found["terminal_tools"] = sorted(self.terminal_tools)
        return found


def load_policy(
    config: Mapping[str, Any], base_dir: Path, fail: Fail, load_function: LoadFunction
) -> ErrorPolicy:
    """Validate the policy keys of an `environment` block (see the module docstring)."""
    on_error = config.get("on_error", "rollback")
    if on_error not in ON_ERROR:
        raise fail("on_error", f"must be 'rollback' or 'keep', got {show(on_error)}")
    prefix = config.get("error_prefix")
    if prefix is not None and (not isinstance(prefix, str) or not prefix):
        raise fail("error_prefix", f"must be a non-empty string, got {show(prefix)}")
    predicate = None
    if config.get("error_predicate") is not None:
        predicate = load_function(config["error_predicate"], base_dir, fail, "error_predicate")
    terminal = config.get("terminal_tools", [])
    if not isinstance(terminal, list) or not all(isinstance(t, str) and t for t in terminal):
        raise fail("terminal_tools", f"must be a list of tool names, got {show(terminal)}")
    return ErrorPolicy(on_error, prefix, predicate, frozenset(terminal))


def unknown_terminal(policy: ErrorPolicy, tools: Mapping[str, Any], fail: Fail) -> None:
    """Refuse a terminal tool the tools module does not define (a misspelt name would
    silently never end an episode)."""
    for name in sorted(policy.terminal_tools):
        if name not in tools:
            raise fail("terminal_tools", f"the tools module has no function {name!r}")

"""Where each argument rule of a tool-definitions spec stands in its file, for messages naming it.

A native spec names a rule by its path, `tools.NAME.args.a.b` (docs/formats.md 2). A list of
tool definitions (2.5) has no such keys: there a rule is named where it is declared in the
JSON, `[2].function.parameters.properties.a` (or `tools[2].inputSchema.properties.a`, by the
file's own shape) for a rule the schema implies, or `...properties.a.x-compare` for one
`x-compare` gives (where its options, and a `reason`, are written). An argument a side rules
file overrides (2.5) is named by its native path in that file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RulePath = tuple[str | int, ...]
"""A rule's place in a tool's arguments: argument names, and `items` for a list's items."""


class ToolFields:
    """Where the rules of one tool of a tools list are declared, by rule path."""

    __slots__ = ("declared", "overrides", "side_source", "source", "tool")

    def __init__(self, schema_field: str, source: str, tool: str) -> None:
        self.source = source
        """The file of the definitions."""
        self.tool = tool
        self.declared: dict[RulePath, str] = {(): schema_field}
        """`[2].function.parameters` for the tool's whole arguments, and each rule below."""
        self.overrides: frozenset[str] = frozenset()
        """The arguments a side rules file gives the rules of (named in that file)."""
        self.side_source: str | None = None

    def override(self, arguments: frozenset[str], side_source: str) -> None:
        """Say that the side rules file `side_source` gives these arguments' rules."""
        self.overrides = arguments
        self.side_source = side_source

    def source_of(self, path: RulePath = ()) -> str:
        """The file declaring the rule at `path`: the side rules file's for an overridden
        argument, else the definitions file."""
        if path and path[0] in self.overrides and self.side_source is not None:
            return self.side_source
        return self.source

    def record(self, path: RulePath, where: str) -> None:
        """Say that the rule at `path` is declared at `where`."""
        self.declared[path] = where

    def record_written(self, node: Mapping[str, Any], path: RulePath, where: str) -> None:
        """Record the rules written out inside an `x-compare` mapping at `where` (its `args`
        and `items`, as in a native rule), below the rule at `path`."""
        args = node.get("args")
        if isinstance(args, Mapping):
            for name, sub in args.items():
                here, at = (*path, str(name)), f"{where}.args.{name}"
                self.record(here, at)
                if isinstance(sub, Mapping):
                    self.record_written(sub, here, at)
        items = node.get("items")
        if items is not None:
            here, at = (*path, "items"), f"{where}.items"
            self.record(here, at)
            if isinstance(items, Mapping):
                self.record_written(items, here, at)

    def field(self, path: RulePath = ()) -> str:
        """The field naming the rule at `path` (below the nearest recorded rule when that
        one is not recorded)."""
        if path and path[0] in self.overrides:
            return native_field(self.tool, path)
        for end in range(len(path), -1, -1):
            found = self.declared.get(path[:end])
            if found is not None:
                return found + "".join(f".{part}" for part in path[end:])
        raise AssertionError("the tool's parameters are always recorded")  # pragma: no cover

    def translate(self, where: str) -> str:
        """A field written as a native path within the tool's `args` (`note.rubric.kind`,
        `[]` for a list's items) named where it is in the tools list."""
        parts = where.split(".")
        if parts[0] in self.overrides:
            return f"{native_field(self.tool)}.{where}"
        for end in range(len(parts), 0, -1):
            path = tuple("items" if part == "[]" else part for part in parts[:end])
            found = self.declared.get(path)
            if found is not None:
                return found + "".join(f".{part}" for part in parts[end:])
        return f"{self.declared[()]}.{where}"


def native_field(tool: str, path: RulePath = ()) -> str:
    """The field naming the rule at `path` of `tool` in a native spec."""
    return f"tools.{tool}.args" + "".join(f".{part}" for part in path)

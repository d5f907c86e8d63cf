"""The problems of a spec file, collected (so that `lint` shows them all and loading raises
the first), and the checks the native reader and the tool-definition readers share: a tool's
arguments compiled into one object rule, and a tool version that results can record."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolscore.core.rules import ObjectRule, Rule, RuleError, compile_rule
from toolscore.core.values import suggest
from toolscore.errors import SpecError
from toolscore.specs.fields import RulePath

TOOL_KEYS = ("version", "args", "description")
"""The keys of a tool of a native spec, and of a side rules file's (2.5)."""
DRAFT_PREFIX = "draft:"
"""How the reason of a rule `spec init` guessed begins: `lint` reports each such rule as a
guess to review until a person rewords the reason (docs/formats.md 2.9)."""

Locator = Callable[[RulePath], str]
"""Names the field of the rule at a path of one tool's arguments."""


class Problems:
    """Collects one file's spec problems, each a SpecError naming the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[SpecError] = []

    def add(self, where: str, message: str) -> None:
        """A problem at the field `where` of this file."""
        self.errors.append(SpecError(self.source, message, field=where))

    def known_keys(self, node: Mapping[Any, Any], keys: tuple[str, ...], where: str = "") -> None:
        """A problem for each key of the mapping `node` (at `where`) that is not one of
        `keys`, with the nearest valid name suggested for a typo."""
        for key in node:
            if key not in keys:
                at = f"{where}.{key}" if where else str(key)
                self.add(at, f"unknown key{suggest(str(key), keys)}")

    def entry(self, where: str, node: Any, keys: tuple[str, ...], form: str) -> bool:
        """Whether the entry `node` at `where` is a mapping (else the problem that it must be
        `form`); its unknown keys are problems too (`known_keys`)."""
        if not isinstance(node, Mapping):
            self.add(where, f"must be {form}")
            return False
        self.known_keys(node, keys, where)
        return True


def compile_tool(args: Any, locate: Locator, problems: Problems) -> ObjectRule | None:
    """The tool's arguments as one object rule; each bad argument is its own problem."""
    if not isinstance(args, Mapping):
        problems.add(locate(()), "must be a mapping of argument names to rules")
        return None
    compiled: dict[str, Rule] = {}
    for name, node in args.items():
        try:
            compiled[str(name)] = compile_rule(node, (str(name),))
        except RuleError as error:
            problems.add(locate(error.path), error.message)
    if len(compiled) < len(args):
        return None
    return ObjectRule(args=compiled)


def version_problem(version: Any) -> str | None:
    """Why a tool's version cannot be recorded with its results, or None (results stores and
    reports keep it as a JSON number, so an integer must fit in 64 bits)."""
    if version is None or isinstance(version, str):
        return None
    if not isinstance(version, int) or isinstance(version, bool):
        return "must be a string or an integer"
    if not -(2**63) <= version < 2**63:
        return "must be an integer within 64 bits (a string holds any label)"
    return None

"""A spec drafted from tool definitions: each argument's rule translated from its JSON
Schema as the loader translates it (docs/formats.md 2.5), each string argument's kind
guessed (`classify`), and a comment on every guess.

The draft is a tree of `DraftRule`s (a rule node and the comments above it) that `emit`
writes as YAML; every node is checked to compile, and a schema `default` its own rule
rejects is left out with a comment, so that the draft always loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.arguments import value_problem
from toolscore.core.rules import RuleError, compile_rule
from toolscore.core.values import show
from toolscore.drafting.classify import classify_string
from toolscore.specs.problems import DRAFT_PREFIX
from toolscore.specs.schema_rules import SCHEMA_KINDS, STRING_FORMATS, schema_type


@dataclass
class DraftRule:
    """One argument's drafted rule node (`args` values and `items` are DraftRules too) and
    the comments written above it."""

    node: dict[str, Any]
    comments: list[str] = field(default_factory=list)

    def plain(self) -> dict[str, Any]:
        """The rule node as a spec holds it."""
        node = dict(self.node)
        if isinstance(node.get("args"), dict):
            node["args"] = {k: _plain(v) for k, v in node["args"].items()}
        if "items" in node:
            node["items"] = _plain(node["items"])
        return node

    def guessed(self) -> bool:
        """Whether this rule is a guess (its reason starts with `draft:`)."""
        reason = self.node.get("reason")
        return isinstance(reason, str) and reason.startswith(DRAFT_PREFIX)


def _plain(value: Any) -> Any:
    return value.plain() if isinstance(value, DraftRule) else value


@dataclass
class DraftTool:
    """One tool of the draft."""

    name: str
    description: str | None
    args: dict[str, DraftRule]
    comments: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """A drafted spec: where it came from, its tools, and notes for its header."""

    source: str
    format: str
    tools: list[DraftTool]
    notes: list[str] = field(default_factory=list)

    def rules(self) -> list[tuple[str, str, DraftRule]]:
        """Every drafted rule as (tool, dotted argument path, rule), nested ones too."""
        found: list[tuple[str, str, DraftRule]] = []

        def walk(tool: str, path: str, rule: DraftRule) -> None:
            found.append((tool, path, rule))
            args = rule.node.get("args")
            if isinstance(args, dict):
                for name, sub in args.items():
                    if isinstance(sub, DraftRule):
                        walk(tool, f"{path}.{name}", sub)
            items = rule.node.get("items")
            if isinstance(items, DraftRule):
                walk(tool, f"{path}[]", items)

        for tool in self.tools:
            for name, rule in tool.args.items():
                walk(tool.name, name, rule)
        return found

    def guesses(self) -> int:
        """How many rules are guesses to review."""
        return sum(rule.guessed() for _, _, rule in self.rules())


def draft_tool(name: str, description: Any, schema: Any) -> DraftTool:
    """The drafted tool of one definition (its arguments' JSON Schema may be None)."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    comments: list[str] = []
    if isinstance(properties, Mapping):
        args = {str(arg): translate(str(arg), prop) for arg, prop in properties.items()}
    else:
        args = {}
        if properties is not None:
            comments.append("its schema's properties are not a mapping: no arguments drafted")
    text = description if isinstance(description, str) else None
    return DraftTool(name, text, args, comments)


def _guess(kind: str, why: str) -> DraftRule:
    return DraftRule({"kind": kind, "reason": f"{DRAFT_PREFIX} {why}"}, [why])


def translate(name: str, prop: Any) -> DraftRule:
    """The drafted rule of the argument `name` with the JSON Schema `prop`, checked."""
    if not isinstance(prop, Mapping):
        return _guess("exact", "review: its schema is not an object; compared exactly as JSON")
    rule = _translated(name, prop)
    if "default" in prop and "default" not in rule.node:
        rule.node["default"] = prop["default"]
    return _checked(rule)


def _translated(name: str, prop: Mapping[str, Any]) -> DraftRule:
    compare = prop.get("x-compare")
    if isinstance(compare, str | Mapping):
        node = {"kind": compare} if isinstance(compare, str) else dict(compare)
        kind = node.get("kind")
        if kind == "enum" and "values" not in node and isinstance(prop.get("enum"), list):
            node["values"] = prop["enum"]
        if kind == "object" and "args" not in node:
            node["args"] = _args(prop)
        if kind == "list" and "items" not in node and isinstance(prop.get("items"), Mapping):
            node["items"] = translate(name, prop["items"])
        return DraftRule(node, ["from the definition's x-compare"])
    if isinstance(prop.get("enum"), list):
        return DraftRule({"kind": "enum", "values": list(prop["enum"])})
    types = schema_type(prop)
    if types == "string":
        form = prop.get("format")
        if isinstance(form, str) and form in STRING_FORMATS:
            return DraftRule({"kind": STRING_FORMATS[form]}, [f"from format: {form}"])
        guess = classify_string(name, dict(prop))
        return _guess(guess.kind, guess.why)
    if types == "object":
        if not isinstance(prop.get("properties"), Mapping) or not prop["properties"]:
            return _guess("exact", "an object without properties: compared whole, as JSON")
        return DraftRule({"kind": "object", "args": _args(prop)})
    if types == "array":
        items = prop.get("items")
        if isinstance(items, Mapping):
            return DraftRule({"kind": "list", "items": translate(name, items)})
        return DraftRule({"kind": "list", "items": "exact"}, ["its items have no schema: exact"])
    if types in SCHEMA_KINDS:
        return DraftRule({"kind": SCHEMA_KINDS[types]})
    what = "no type" if types is None else f"type {types!r}"
    return _guess("exact", f"review: its schema gives {what}; compared exactly as JSON")


def _args(prop: Mapping[str, Any]) -> dict[str, DraftRule]:
    properties = prop.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {str(key): translate(str(key), sub) for key, sub in properties.items()}


def _checked(rule: DraftRule) -> DraftRule:
    """The rule, or `exact` with a comment when its node does not compile; a default its
    own rule rejects is left out, with a comment."""
    try:
        compiled = compile_rule(rule.plain(), ("x",))
    except RuleError as error:
        return _guess(
            "exact", f"review: the schema's rule could not be translated ({error.message})"
        )
    default = rule.node.get("default")
    if "default" in rule.node and default is not None:
        problem = value_problem(compiled, default)
        if problem is not None:
            del rule.node["default"]
            rule.comments.append(f"the schema's default {show(default)} is left out: {problem}")
    return rule

"""BFCL function docs -> toolscore rule nodes, and one spec for every case of a file.

Types map to kinds as follows (the node is what `tools.yaml` holds):

- `string`, `any` -> `exact`. BFCL compares strings case-insensitively with punctuation
  stripped; toolscore keeps identifiers exact (`--bfcl-strings` reproduces BFCL, see
  `strings`). BFCL type-checks `any` as a string; `exact` compares any JSON value.
- `integer` -> `integer`: JSON has one number type, so `5.0` is 5 (BFCL, checking Python
  types, rejects `5.0`: a documented difference).
- `float` -> `number` (tol 0): an integer is accepted for a float, as BFCL accepts it.
- `boolean` -> `boolean` (never `1`).
- `array`, `tuple` -> `list`, ordered (BFCL compares lists in order), items by their own
  `items` type, `exact` when none is given.
- `dict` -> `object` with one rule per key when the doc gives `properties` (unknown keys
  fail, as in BFCL), else `exact` (the whole object compared as JSON).
- `enum` in a doc is not turned into the `enum` kind: BFCL never checks membership, and an
  expected value outside the list would make the case unscorable. The values compare by type.

A parameter's documented `default` becomes the rule's `default` when the parameter is not
`required` and the rule accepts the value: the tool says that omitting it means that value.
Nested defaults (inside dict properties) are not used: BFCL's answers mark omittable keys.

BFCL defines tools per case, and the same name can carry different docs in different cases;
toolscore has one spec per run. Definitions are merged: the union of the arguments, and where
two docs disagree about one argument, the common ground (same kind: the kind without a
default unless the defaults agree; different kinds: `exact`, which gives the same verdict on
scalar values as `integer`, `number` (tol 0), `boolean` and string `exact`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.arguments import value_problem
from toolscore.core.rules import RuleError, compile_rule

Node = dict[str, Any]
"""A rule node as written in `tools.yaml`: `{"kind": ..., options...}`."""

_SCALAR_KINDS = {
    "string": "exact",
    "any": "exact",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "bool": "boolean",
}
LIST_TYPES = frozenset({"array", "tuple", "list"})
DICT_TYPES = frozenset({"dict", "object"})

MERGED_REASON = "the tool's BFCL docs disagree about this argument from case to case"


class SchemaError(ValueError):
    """A function doc that cannot become a spec; the message names the parameter."""


def rule_node(prop: Any, path: str) -> Node:
    """The rule node for one BFCL parameter schema (without its default)."""
    if not isinstance(prop, Mapping):
        raise SchemaError(f"{path}: a parameter must be an object with a 'type'")
    declared = prop.get("type")
    if isinstance(declared, str) and declared in _SCALAR_KINDS:
        return {"kind": _SCALAR_KINDS[declared]}
    if declared in LIST_TYPES:
        items = prop.get("items")
        if isinstance(items, Mapping) and "type" in items:
            return {"kind": "list", "items": rule_node(items, f"{path}.items")}
        return {"kind": "list", "items": {"kind": "exact"}}
    if declared in DICT_TYPES:
        properties = prop.get("properties")
        if isinstance(properties, Mapping) and properties:
            return {
                "kind": "object",
                "args": {str(k): rule_node(v, f"{path}.{k}") for k, v in properties.items()},
            }
        return {"kind": "exact"}
    raise SchemaError(
        f"{path}: type {declared!r} is not one of BFCL's Python types "
        "(string, integer, float, boolean, array, tuple, dict, any)"
    )


def parameters(function: Mapping[str, Any]) -> tuple[Mapping[str, Any], frozenset[str]]:
    """A function doc's parameter schemas by name, and the names it requires."""
    params = function.get("parameters")
    if not isinstance(params, Mapping):
        return {}, frozenset()
    properties = params.get("properties")
    required = params.get("required")
    names = (
        frozenset(r for r in required if isinstance(r, str))
        if isinstance(required, list)
        else frozenset()
    )
    return (properties if isinstance(properties, Mapping) else {}), names


def tool_args(function: Mapping[str, Any], where: str, notes: list[str]) -> dict[str, Node]:
    """Every parameter of one function doc as a rule node, with its usable default."""
    properties, required = parameters(function)
    args: dict[str, Node] = {}
    for name, prop in properties.items():
        node = rule_node(prop, f"{where}.{name}")
        if isinstance(prop, Mapping) and "default" in prop and name not in required:
            default = prop["default"]
            if _accepts_default(node, default):
                node["default"] = default
            else:
                notes.append(
                    f"{where}.{name}: documented default {json.dumps(default)} is not a value "
                    f"of its type; not used"
                )
        args[str(name)] = node
    return args


def _accepts_default(node: Node, default: Any) -> bool:
    try:
        rule = compile_rule(node)
    except RuleError:  # pragma: no cover - nodes built here always compile
        return False
    return value_problem(rule, default) is None


def canonical(value: Any) -> str:
    """A value's JSON text with sorted keys: equal texts are the same JSON value (`1`, `1.0`
    and `true` are three different ones)."""
    return json.dumps(value, sort_keys=True)


def same(a: Any, b: Any) -> bool:
    """JSON identity (see `canonical`)."""
    return canonical(a) == canonical(b)


def merge_nodes(a: Node, b: Node) -> Node:
    """The rule that fits two docs' views of one argument (see the module docstring)."""
    if same(a, b):
        return a
    kind = a["kind"]
    if kind != b["kind"]:
        merged: Node = {"kind": "exact", "reason": MERGED_REASON}
    elif kind == "list":
        merged = {"kind": "list", "items": merge_nodes(a["items"], b["items"])}
    elif kind == "object":
        args = dict(a["args"])
        for name, node in b["args"].items():
            args[name] = merge_nodes(args[name], node) if name in args else node
        merged = {"kind": "object", "args": args}
    else:
        merged = {k: v for k, v in a.items() if k != "default"}
    if "default" in a and "default" in b and same(a["default"], b["default"]):
        merged["default"] = a["default"]
    return merged


@dataclass
class ToolDraft:
    """One tool of the spec being built: its first description and its merged arguments."""

    name: str
    description: str | None
    args: dict[str, Node]
    definitions: set[str] = field(default_factory=set)
    """The distinct docs seen for the tool (as JSON text), to report merges."""

    dropped: set[str] = field(default_factory=set)
    """Arguments whose documented defaults disagree between docs (the spec has none)."""

    def add(self, args: Mapping[str, Node], doc: str) -> None:
        """Merge another case's doc of the same tool."""
        self.definitions.add(doc)
        for name, node in args.items():
            if name not in self.args:
                self.args[name] = node
                continue
            merged = merge_nodes(self.args[name], node)
            if "default" in self.args[name] and "default" not in merged:
                self.dropped.add(name)
            self.args[name] = merged

    def to_spec(self) -> dict[str, Any]:
        """The tool as `tools.yaml` writes it (kind shorthands where a node has no options)."""
        tool: dict[str, Any] = {"version": 1}
        if self.description:
            tool["description"] = self.description
        tool["args"] = {name: compact(node) for name, node in self.args.items()}
        return tool


def compact(node: Node) -> Any:
    """A node written the short way: `exact` for `{kind: exact}`, nested nodes likewise."""
    if node.keys() == {"kind"}:
        return node["kind"]
    out = dict(node)
    if "items" in out:
        out["items"] = compact(out["items"])
    if "args" in out:
        out["args"] = {name: compact(sub) for name, sub in out["args"].items()}
    return out

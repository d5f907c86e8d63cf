"""tau-bench tool schemas (the JSON Schema `parameters` of `get_info()`) -> toolscore rules.

- `string` -> `exact`: ids (`#W2378156`, `credit_card_9513926`), dates and enum members are
  compared character for character; `enum` lists are not turned into the `enum` kind (an
  annotated value outside the list would make the case unscorable). The free-text arguments
  (`FREE_TEXT`: a transfer's `summary`, a `think` tool's `thought`) -> `text`, never compared.
- `integer` -> `integer`, `number` -> `number` (tolerance 0), `boolean` -> `boolean`.
- `array` -> `list` in order, items by their own schema (`exact` without one).
- `object` -> `object` with a rule per listed property, or `exact` (compared whole) without.

These rules only serve the call-level diagnosis: tau-bench's reward never compares arguments,
only the data the calls leave behind and what the agent said.
"""

from __future__ import annotations

from typing import Any

FREE_TEXT = frozenset({"summary", "thought"})
"""Argument names whose values are prose in tau-bench's tools."""

_SCALARS = {"string": "exact", "integer": "integer", "number": "number", "boolean": "boolean"}


def rule(schema: Any, name: str | None = None) -> Any:
    """The toolscore rule node for one JSON Schema property."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "string" and name in FREE_TEXT:
        return "text"
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = schema.get("items")
        return {"kind": "list", "items": rule(items) if isinstance(items, dict) else "exact"}
    if kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
        return {"kind": "object", "args": args(schema)}
    return "exact"


def args(parameters: Any) -> dict[str, Any]:
    """A tool's (or an object's) argument rules, from its `properties`."""
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    return {str(key): rule(value, str(key)) for key, value in properties.items()}

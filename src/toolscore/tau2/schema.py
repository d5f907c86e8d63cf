"""tau2-bench tool signatures (the type annotations of each `@is_tool` method, read with
`ast`) -> toolscore rules, as tau2 turns them into JSON Schema for the agent:

- `str` -> `exact` (ids, dates and enum members are compared character for character),
  except the prose arguments `FREE_TEXT` (a transfer's `summary`) -> `text`, never compared;
- `int` -> `integer`, `float` -> `number` (tolerance 0), `bool` -> `boolean`;
- `list[X]` / `List[X]` -> `list` in order, items by X's rule;
- `Optional[X]` and `X | None` -> X's rule; anything else (a `dict`, a pydantic model such
  as `FlightInfo`, a `Literal`) -> `exact` (compared whole).

These rules serve the call-level diagnosis: tau2's DB and communicate checks never compare
arguments (its ACTION check does, by equality: docs/formats.md 14).
"""

from __future__ import annotations

import ast
from typing import Any

FREE_TEXT = frozenset({"summary", "thought"})
"""Argument names whose values are prose in tau2's tools (`transfer_to_human_agents`)."""

_SCALARS = {"str": "exact", "int": "integer", "float": "number", "bool": "boolean"}
_LISTS = ("list", "List", "Sequence")
_OPTIONAL = ("Optional",)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        try:
            return _name(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    return None


def rule(annotation: ast.expr | None, name: str | None = None) -> Any:
    """The toolscore rule node for one annotated parameter (`exact` without annotation)."""
    if annotation is None:
        return "exact"
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return rule(ast.parse(annotation.value, mode="eval").body, name)
        except SyntaxError:
            return "exact"
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        return rule(kept[0], name) if len(kept) == 1 else "exact"
    if isinstance(annotation, ast.Subscript):
        outer = _name(annotation.value)
        if outer in _OPTIONAL:
            return rule(annotation.slice, name)
        if outer in _LISTS:
            return {"kind": "list", "items": rule(annotation.slice)}
        return "exact"
    scalar = _name(annotation)
    if scalar == "str" and name in FREE_TEXT:
        return "text"
    return _SCALARS.get(scalar or "", "exact")

"""JSON Schema, as tool definitions declare arguments, translated into rule nodes.

Each property becomes the rule node a native spec would write (docs/formats.md 2.5): its
`x-compare` when it has one, else a rule derived from `enum`, `type` and `format`; the
schema's `default` is the rule's. Where each rule is declared is recorded in `ToolFields`, so
that messages name the JSON position. Gemini's OpenAPI subset (`"type": "STRING"`) is read
through `openapi_schema`, which lowers its type names to JSON Schema's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.rules import RuleError
from toolscore.specs.fields import RulePath, ToolFields

SCHEMA_KINDS = {
    "string": "exact",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "object": "object",
    "array": "list",
}
"""The kind each JSON Schema `type` implies."""
STRING_FORMATS = {"date": "date", "date-time": "datetime"}
"""The kind a string's `format` implies, where a kind compares such strings."""
_SUBSCHEMAS = ("items", "additionalProperties", "not")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def schema_args(
    schema: Mapping[str, Any], path: RulePath, where: str, fields: ToolFields
) -> dict[str, Any]:
    """The rule nodes of a schema's `properties` (the schema at `where`)."""
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise RuleError(path, "properties must be a mapping of argument names to schemas")
    return {
        name: schema_rule(prop, (*path, name), f"{where}.properties.{name}", fields)
        for name, prop in properties.items()
    }


def schema_rule(prop: Any, path: RulePath, where: str, fields: ToolFields) -> dict[str, Any]:
    """The rule node for one JSON Schema property (at `where`): its `x-compare`, else derived
    from the type."""
    fields.record(path, where)
    if not isinstance(prop, Mapping):
        return {"kind": "exact"}
    compare = prop.get("x-compare")
    if compare is not None:
        fields.record(path, f"{where}.x-compare")
        if not isinstance(compare, str | Mapping):
            raise RuleError(path, "x-compare must be a kind name or a kind object")
        node = {"kind": compare} if isinstance(compare, str) else dict(compare)
        if isinstance(compare, Mapping):
            fields.record_written(compare, path, f"{where}.x-compare")
        kind = node.get("kind")
        if kind == "object" and "args" not in node:
            node["args"] = schema_args(prop, path, where, fields)
        if kind == "list" and "items" not in node and isinstance(prop.get("items"), Mapping):
            node["items"] = schema_rule(prop["items"], (*path, "items"), f"{where}.items", fields)
        if kind == "enum" and "values" not in node and isinstance(prop.get("enum"), list):
            node["values"] = prop["enum"]
    else:
        node = derived_rule(prop, path, where, fields)
    if "default" in prop and "default" not in node:
        node["default"] = prop["default"]
    return node


def schema_type(prop: Mapping[str, Any]) -> str | None:
    """The property's type: its `type`, or the first of a list that is not `"null"`."""
    types = prop.get("type")
    if isinstance(types, list):
        types = next((t for t in types if t != "null"), None)
    return types if isinstance(types, str) else None


def derived_rule(
    prop: Mapping[str, Any], path: RulePath, where: str, fields: ToolFields
) -> dict[str, Any]:
    """The rule node a property without `x-compare` implies: `enum`, else by type (and a
    string's `format`), else `exact`."""
    if isinstance(prop.get("enum"), list):
        return {"kind": "enum", "values": prop["enum"]}
    types = schema_type(prop)
    kind = SCHEMA_KINDS.get(types, "exact") if types is not None else "exact"
    if types == "string" and isinstance(prop.get("format"), str):
        kind = STRING_FORMATS.get(prop["format"], kind)
    node: dict[str, Any] = {"kind": kind}
    if kind == "object":
        node["args"] = schema_args(prop, path, where, fields)
    elif kind == "list":
        items = prop.get("items")
        node["items"] = (
            schema_rule(items, (*path, "items"), f"{where}.items", fields)
            if isinstance(items, Mapping)
            else "exact"
        )
    return node


def openapi_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset schema as JSON Schema: each `type` name lowered
    (`"STRING"` is `"string"`), in every subschema; everything else as written."""
    if not isinstance(schema, Mapping):
        return schema
    lowered: dict[Any, Any] = dict(schema)
    types = lowered.get("type")
    if isinstance(types, str):
        lowered["type"] = types.lower()
    elif isinstance(types, list):
        lowered["type"] = [t.lower() if isinstance(t, str) else t for t in types]
    properties = lowered.get("properties")
    if isinstance(properties, Mapping):
        lowered["properties"] = {k: openapi_schema(v) for k, v in properties.items()}
    for key in _SUBSCHEMAS:
        if key in lowered:
            lowered[key] = openapi_schema(lowered[key])
    for key in _SCHEMA_LISTS:
        if isinstance(lowered.get(key), list):
            lowered[key] = [openapi_schema(item) for item in lowered[key]]
    return lowered

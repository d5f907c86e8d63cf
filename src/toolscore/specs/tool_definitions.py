"""Tool definitions as teams already have them, read as specs: OpenAI Chat and Responses
tools, Anthropic tools, Gemini function declarations and MCP `tools/list` results.

The format is told by the file's shape (docs/formats.md 2.5); a shape that fits none, or
more than one, is one problem naming where. Each definition gives a name, a description, a
JSON Schema of its arguments (translated by `schema_rules`) and the place in the file where
each of those stands, so that messages name `tools[3].inputSchema.properties.city` in an MCP
result and `[0].input_schema...` in an Anthropic list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolscore.core.rules import RuleError
from toolscore.specs.fields import ToolFields
from toolscore.specs.problems import Problems, compile_tool, version_problem
from toolscore.specs.schema_rules import openapi_schema, schema_args

FORMATS = ("openai", "anthropic", "gemini", "mcp")
"""The formats of tool definitions, as `spec init --format` names them."""
NATIVE_KEYS = ("version", "relax", "environment", "rubrics", "forbid", "definitions")
"""Keys of a native spec, refused beside a tools list (where they would be ignored). Other
keys beside it are a result's metadata (`nextCursor`, `_meta`, `ttlMs`: MCP adds them from
version to version) and are not read."""
GEMINI_LISTS = ("function_declarations", "functionDeclarations")
GEMINI_JSON_SCHEMA = ("parametersJsonSchema", "parameters_json_schema")
_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


class ShapeError(Exception):
    """A file whose shape is no format of tool definitions (or more than one), at `where`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


@dataclass(frozen=True, slots=True)
class Definition:
    """One tool's definition, as the file wrote it, and where its parts stand."""

    name: str
    description: Any
    schema: Any
    """The arguments' JSON Schema (Gemini's OpenAPI subset already lowered), or None."""
    schema_field: str
    """Where the schema stands (`[2].function.parameters`), or would stand when absent."""
    base: str
    """Where the definition stands: `[2].function`, `tools[0]`, ..."""
    version: Any
    """Its `x-version`, or None."""


def is_definitions(data: Any) -> bool:
    """Whether parsed spec data is tool definitions rather than a native spec (a mapping
    whose `tools` is a mapping; an empty `tools` list is left to the native reader's
    problem, which says what a spec needs)."""
    if isinstance(data, list):
        return True
    if not isinstance(data, Mapping):
        return False
    return (
        "jsonrpc" in data
        or (isinstance(data.get("tools"), list) and bool(data["tools"]))
        or any(key in data for key in GEMINI_LISTS)
    )


def read_definitions(data: Any) -> tuple[str, list[Definition | ShapeError]]:
    """The format of tool definitions and each definition (or the problem of one that is
    not a definition); a ShapeError when the whole is no format or mixes formats."""
    prefix, items = _items(data)
    found: list[tuple[str, Definition | ShapeError]] = []
    for index, item in enumerate(items):
        at = f"{prefix}[{index}]"
        found.extend(_definitions_of(item, at))
    formats = sorted({form for form, _ in found if form})
    if len(formats) > 1:
        raise ShapeError(
            prefix or "(top)",
            f"mixes tool definitions of several formats ({', '.join(formats)}); "
            "a file holds one format",
        )
    form = formats[0] if formats else "openai"
    return form, [_marked(entry, form) if not kind else entry for kind, entry in found]


_SCHEMA_KEYS = {"anthropic": "input_schema", "mcp": "inputSchema"}


def _marked(entry: Definition | ShapeError, form: str) -> Definition | ShapeError:
    """A definition without its format's schema key, among that format's: refused (an
    Anthropic or MCP tool needs its schema; OpenAI's shapes may leave it out)."""
    key = _SCHEMA_KEYS.get(form)
    if key is None or isinstance(entry, ShapeError):
        return entry
    return ShapeError(entry.base, f"a tool definition needs {key!r} (its arguments' JSON Schema)")


def _items(data: Any) -> tuple[str, list[Any]]:
    """Where the list of definitions stands, and the list."""
    if isinstance(data, list):
        return "", data
    if not isinstance(data, Mapping):
        raise ShapeError("(top)", "tool definitions are a list, or a mapping with 'tools'")
    if "jsonrpc" in data:
        if "error" in data:
            raise ShapeError("error", "a JSON-RPC error response holds no tool definitions")
        result = data.get("result")
        if not isinstance(result, Mapping) or not isinstance(result.get("tools"), list):
            raise ShapeError("result", "a JSON-RPC response's result needs a 'tools' list")
        _no_native(result, "result.")
        return "result.tools", result["tools"]
    for key in GEMINI_LISTS:
        if key in data:
            _no_native(data, "")
            if not isinstance(data[key], list):
                raise ShapeError(key, "must be a list of function declarations")
            return key, data[key]
    if not isinstance(data.get("tools"), list):
        raise ShapeError("(top)", "tool definitions are a list, or a mapping with a 'tools' list")
    _no_native(data, "")
    return "tools", data["tools"]


def _no_native(node: Mapping[str, Any], prefix: str) -> None:
    """Refuse a native spec's key beside a list of tool definitions."""
    for key in NATIVE_KEYS:
        if key in node:
            message = (
                "a native spec's key beside a list of tool definitions (a native spec's "
                "tools are a mapping; to add rules to these, write a side rules file)"
            )
            raise ShapeError(f"{prefix}{key}", message)


_MARKERS = {
    "function": "openai",
    "input_schema": "anthropic",
    "inputSchema": "mcp",
    "function_declarations": "gemini",
    "functionDeclarations": "gemini",
    "parametersJsonSchema": "gemini",
    "parameters_json_schema": "gemini",
}
"""The key that tells each format's definition apart (OpenAI's bare and Responses shapes
have none of them: `name` and `parameters`)."""


def _definitions_of(item: Any, at: str) -> Iterator[tuple[str, Definition | ShapeError]]:
    """The definitions of one item of the list (a Gemini tool holds several), each with its
    format."""
    needs = "a tool definition needs 'name' (or 'function': {name, ...})"
    if not isinstance(item, Mapping):
        yield "", ShapeError(at, needs)
        return
    markers = sorted(key for key in item if key in _MARKERS)
    if markers and markers[0] not in GEMINI_JSON_SCHEMA and "parameters" in item:
        markers.append("parameters")  # a schema under two formats' keys
    if len(markers) > 1:
        names = " and ".join(repr(key) for key in markers)
        yield "", ShapeError(at, f"has both {names}: which format is it?")
        return
    marker = markers[0] if markers else None
    if marker in GEMINI_LISTS:
        declarations = item[marker]
        if not isinstance(declarations, list):
            yield "gemini", ShapeError(f"{at}.{marker}", "must be a list of function declarations")
            return
        for index, declaration in enumerate(declarations):
            yield "gemini", _gemini(declaration, f"{at}.{marker}[{index}]")
        return
    if marker == "function":
        function = item["function"]
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            yield "openai", ShapeError(at, needs)
            return
        yield "openai", _plain(function, f"{at}.function", "parameters")
        return
    if not isinstance(item.get("name"), str):
        yield _MARKERS.get(marker or "", ""), ShapeError(at, needs)
        return
    if marker == "input_schema":
        yield "anthropic", _plain(item, at, "input_schema", required=True)
    elif marker == "inputSchema":
        yield "mcp", _plain(item, at, "inputSchema", required=True)
    elif marker in GEMINI_JSON_SCHEMA:
        yield "gemini", _gemini(item, at)
    else:
        yield "", _plain(item, at, "parameters")


def _plain(
    node: Mapping[str, Any], at: str, key: str, *, required: bool = False
) -> Definition | ShapeError:
    """A definition whose schema is the JSON Schema at `key`."""
    if required and key not in node:
        return ShapeError(at, f"a tool definition needs {key!r} (its arguments' JSON Schema)")
    return Definition(
        node["name"],
        node.get("description"),
        node.get(key),
        f"{at}.{key}",
        at,
        node.get("x-version"),
    )


def _gemini(node: Any, at: str) -> Definition | ShapeError:
    """A Gemini function declaration: `parametersJsonSchema` (JSON Schema) or `parameters`
    (the OpenAPI subset, type names lowered)."""
    if not isinstance(node, Mapping) or not isinstance(node.get("name"), str):
        return ShapeError(at, "a function declaration needs 'name'")
    keys = [key for key in (*GEMINI_JSON_SCHEMA, "parameters") if key in node]
    if len(keys) > 1:
        names = " and ".join(repr(key) for key in keys)
        return ShapeError(at, f"has both {names}: give the arguments' schema once")
    if not keys:
        return Definition(
            node["name"],
            node.get("description"),
            None,
            f"{at}.parameters",
            at,
            node.get("x-version"),
        )
    key = keys[0]
    schema = openapi_schema(node[key]) if key == "parameters" else node[key]
    return Definition(
        node["name"], node.get("description"), schema, f"{at}.{key}", at, node.get("x-version")
    )


def definition_tools(
    data: Any, problems: Problems, located: dict[str, ToolFields]
) -> Iterator[tuple[str, Definition, Any]]:
    """Each tool of tool definitions as (name, definition, compiled arguments rule); where
    each tool's rules stand goes into `located`, and problems are named where they are in
    the file."""
    # Only tool definitions carry JSON Schema: native specs never pay for its validator.
    from jsonschema import Draft202012Validator  # noqa: PLC0415
    from jsonschema.exceptions import SchemaError as JsonSchemaError  # noqa: PLC0415

    try:
        _, entries = read_definitions(data)
    except ShapeError as error:
        problems.add(error.where, error.message)
        return
    if not entries:
        problems.add("(top)", "the tool list is empty")
    first: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry, ShapeError):
            problems.add(entry.where, entry.message)
            continue
        name = entry.name
        if name in first:
            problems.add(
                f"{entry.base}.name", f"tool {name!r} is defined twice (first at {first[name]})"
            )
            continue
        first[name] = entry.base.split(".function", 1)[0]
        fields = located[name] = ToolFields(entry.schema_field, problems.source, name)
        schema = _EMPTY_SCHEMA if entry.schema is None or entry.schema == {} else entry.schema
        try:
            Draft202012Validator.check_schema(schema)
        except JsonSchemaError as error:
            problems.add(entry.schema_field, f"not a valid JSON Schema: {error.message}")
            continue
        if not isinstance(schema, Mapping):
            problems.add(entry.schema_field, "must be an object schema")
            continue
        try:
            args = schema_args(schema, (), entry.schema_field, fields)
        except RuleError as error:
            problems.add(fields.field(error.path), error.message)
            continue
        rule = compile_tool(args, fields.field, problems)
        problem = version_problem(entry.version)
        if problem:
            problems.add(f"{entry.base}.x-version", problem)
        elif rule is not None:
            yield name, entry, rule

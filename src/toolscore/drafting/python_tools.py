"""Python functions as tool definitions, for `spec init --python MODULE:FUNC[,FUNC...]`.

Only the module the user names is imported (under the time limit of a replayed tool call,
as the state package imports a spec's tools module); nothing is called. Each function's
signature and type hints become a JSON Schema: `int`, `float`, `bool`, `str`, `list[...]`,
`tuple[...]`, `dict`, `Literal[...]` and `Enum` subclasses (enums), `Optional`/`X | None`,
`date`/`datetime` (string formats), pydantic models (their own `model_json_schema()`,
pydantic itself never imported here), `Annotated[..., "description"]` and
`Field(description=...)`; defaults that are JSON values; and the docstring as descriptions
(its first paragraph for the tool, a Google-style `Args:` section for the arguments).
"""

from __future__ import annotations

import ast
import builtins
import datetime
import enum
import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolscore.errors import InputError, SpecError
from toolscore.limits import CallTimeout, alarms_installed, time_limit
from toolscore.specs.loading import DEFAULT_TIMEOUT
from toolscore.specs.tool_definitions import Definition
from toolscore.state.environment_common import import_module

_SCALARS: dict[Any, str] = {int: "integer", float: "number", bool: "boolean", str: "string"}
_SKIPPED = frozenset({"self", "cls", "ctx"})
"""Parameters that are not arguments: a method's own, and the context state tools take."""
_CONNECTIONS = frozenset({"db", "conn", "connection"})
"""A first parameter so named is the store connection of a state tool (docs/formats.md 9.1),
not an argument."""
_GENERIC_MODULES = frozenset({"typing", "typing_extensions", "builtins", "collections.abc"})
"""Where the generics a string annotation may subscript come from (`list[int]`,
`Optional[str]`): subscribing them runs no code of the user's."""
_MAX_REF_DEPTH = 20


def python_definitions(reference: str, base_dir: Path | None = None) -> list[Definition]:
    """The definitions of `MODULE:FUNC[,FUNC...]` (a module name or a .py path)."""
    source = "--python"
    module_ref, colon, names = reference.rpartition(":")
    if not colon or not module_ref or not names.strip(","):
        raise SpecError(source, f"must be MODULE:FUNC[,FUNC...], got {reference!r}")

    def fail(_: str, message: str) -> InputError:
        return SpecError(source, message)

    try:
        with alarms_installed(), time_limit(DEFAULT_TIMEOUT):
            module = import_module(module_ref, base_dir or Path.cwd(), fail, "python")
    except CallTimeout:
        message = f"importing {module_ref!r} took longer than {DEFAULT_TIMEOUT:g} s"
        raise SpecError(source, message) from None
    definitions: list[Definition] = []
    for name in (part.strip() for part in names.split(",")):
        if not name:
            continue
        function = getattr(module, name, None)
        if not callable(function):
            raise SpecError(source, f"{module_ref!r} has no function {name!r}")
        definitions.append(function_definition(function, name, f"{module_ref}:{name}"))
    return definitions


def function_definition(function: Callable[..., Any], name: str, where: str) -> Definition:
    """The definition of one function: its parameters' schema and its docstring."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as error:
        raise SpecError("--python", f"{where}: no signature to read ({error})") from None
    namespace = {**vars(builtins), **getattr(function, "__globals__", {})}
    summary, documented = _docstring(inspect.getdoc(function) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, parameter in enumerate(signature.parameters.values()):
        if (
            parameter.name in _SKIPPED
            or (index == 0 and parameter.name in _CONNECTIONS)
            or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ):
            continue
        annotation = parameter.annotation
        if isinstance(annotation, str):  # `from __future__ import annotations`: read, not run
            annotation = resolve_annotation(annotation, namespace)
        schema = annotation_schema(annotation)
        default = parameter.default
        if _is_field(default):
            if isinstance(getattr(default, "description", None), str):
                schema.setdefault("description", default.description)
            default = getattr(default, "default", inspect.Parameter.empty)
        if parameter.name in documented:
            schema.setdefault("description", documented[parameter.name])
        if default is inspect.Parameter.empty or _is_undefined(default):
            required.append(parameter.name)
        else:
            json_default = _json_value(default)
            if json_default is not _NOT_JSON:
                schema["default"] = json_default
        properties[parameter.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return Definition(name, summary or None, parameters, where, where, None)


class _Described:
    """A description written in a string annotation (`Annotated[str, Field(description=
    "...")]`), kept as text: the call is read, never made."""

    def __init__(self, description: str) -> None:
        self.description = description


def resolve_annotation(text: str, namespace: Mapping[str, Any]) -> Any:
    """The type hint a string annotation names, read with `ast` and names looked up in the
    function's module: only generics of typing and builtins are subscripted, nothing is
    evaluated. `inspect.Parameter.empty` (any value) where it cannot be read so."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return inspect.Parameter.empty
    return _resolved(tree, namespace, 0)


def _resolved(node: ast.expr, namespace: Mapping[str, Any], depth: int) -> Any:
    empty = inspect.Parameter.empty
    if depth > _MAX_REF_DEPTH:
        return empty
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str) and depth > 0:
            return node.value  # a Literal's value, or an Annotated description
        return None if node.value is None else (node.value if depth > 0 else empty)
    if isinstance(node, ast.Name):
        return namespace.get(node.id, empty)
    if isinstance(node, ast.Attribute):
        base = _resolved(node.value, namespace, depth + 1)
        return empty if base is empty else getattr(base, node.attr, empty)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [_resolved(side, namespace, depth + 1) for side in (node.left, node.right)]
        if any(part is empty for part in parts):
            return empty
        return typing.Union[tuple(type(None) if p is None else p for p in parts)]  # noqa: UP007
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            value = keyword.value
            if (
                keyword.arg == "description"
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                return _Described(value.value)
        return empty
    if isinstance(node, ast.Subscript):
        base = _resolved(node.value, namespace, depth + 1)
        if base is empty or getattr(base, "__module__", None) not in _GENERIC_MODULES:
            return empty
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = [_resolved(element, namespace, depth + 1) for element in elements]
        if base is not typing.Annotated and any(arg is empty for arg in args):
            return empty
        if base is typing.Annotated and args and args[0] is empty:
            return empty
        args = [type(None) if arg is None and base is not typing.Literal else arg for arg in args]
        try:
            return base[tuple(args)] if len(args) > 1 else base[args[0]]
        except TypeError:
            return empty
    return empty


def annotation_schema(annotation: Any, depth: int = 0) -> dict[str, Any]:
    """The JSON Schema of a type hint ({} for a hint it cannot translate: any value)."""
    if annotation is inspect.Parameter.empty or annotation is Any or depth > _MAX_REF_DEPTH:
        return {}
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = annotation_schema(arguments[0], depth + 1)
        for extra in arguments[1:]:
            text = extra if isinstance(extra, str) else getattr(extra, "description", None)
            if isinstance(text, str):
                schema.setdefault("description", text)
        return schema
    if origin is typing.Union or origin is types.UnionType:
        kept = [a for a in arguments if a is not type(None)]
        if len(kept) == 1:
            return annotation_schema(kept[0], depth + 1)
        return {"anyOf": [annotation_schema(a, depth + 1) for a in kept]}
    if origin is typing.Literal:
        return {"enum": [_json_value(a) for a in arguments if _json_value(a) is not _NOT_JSON]}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if annotation is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    if annotation is datetime.date:
        return {"type": "string", "format": "date"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [_json_value(member.value) for member in annotation]}
    if callable(getattr(annotation, "model_json_schema", None)):
        return _model_schema(annotation)
    container = origin or annotation
    if container is tuple:
        kept = [a for a in arguments if a is not Ellipsis]
        array: dict[str, Any] = {"type": "array"}
        if kept and all(a == kept[0] for a in kept):
            array["items"] = annotation_schema(kept[0], depth + 1)
        return array
    if container in (list, set, frozenset) or (
        isinstance(container, type)
        and issubclass(container, Sequence)
        and container not in (str, bytes)
    ):
        listed: dict[str, Any] = {"type": "array"}
        if arguments:
            listed["items"] = annotation_schema(arguments[0], depth + 1)
        return listed
    if container is dict or (isinstance(container, type) and issubclass(container, Mapping)):
        return {"type": "object"}
    return {}


def _model_schema(model: Any) -> dict[str, Any]:
    """A pydantic model's JSON Schema, its `$defs` references written out in place."""
    try:
        schema = model.model_json_schema()
    except Exception as error:
        raise SpecError("--python", f"{model!r}.model_json_schema() failed: {error}") from None
    if not isinstance(schema, dict):
        raise SpecError("--python", f"{model!r}.model_json_schema() is not a JSON object")
    inlined: dict[str, Any] = _inline(schema, schema.get("$defs", {}), 0)
    return inlined


def _inline(node: Any, definitions: Mapping[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, depth) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        target = definitions.get(reference.removeprefix("#/$defs/"))
        if target is None or depth >= _MAX_REF_DEPTH:
            return {}  # a recursive model: any value below this depth
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, definitions, depth + 1)
    if "allOf" in node and isinstance(node["allOf"], list) and len(node["allOf"]) == 1:
        merged = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
        return _inline(merged, definitions, depth)
    return {k: _inline(v, definitions, depth) for k, v in node.items() if k != "$defs"}


def _is_field(value: Any) -> bool:
    """Whether a default is pydantic's `Field(...)` (told by its class name: pydantic is
    not imported here)."""
    return type(value).__name__ == "FieldInfo"


def _is_undefined(value: Any) -> bool:
    return type(value).__name__ == "PydanticUndefinedType"


_NOT_JSON = object()


def _json_value(value: Any) -> Any:
    """A default or literal as a JSON value (an Enum member as its value), or `_NOT_JSON`."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NOT_JSON
    if isinstance(value, list | tuple):
        items = [_json_value(item) for item in value]
        return _NOT_JSON if any(item is _NOT_JSON for item in items) else items
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        converted = {k: _json_value(v) for k, v in value.items()}
        return _NOT_JSON if any(v is _NOT_JSON for v in converted.values()) else converted
    return _NOT_JSON


_ARGS_HEADER = re.compile(r"(Args|Arguments|Parameters):")
_ARG_LINE = re.compile(r"(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)")


def _docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A docstring's first paragraph, and its Google-style `Args:` section's descriptions
    by name (an entry at the section's first indentation, continued by deeper lines)."""
    lines = doc.strip().splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.fullmatch(line.strip()):
            break
        summary_lines.append(line.strip())
    described: dict[str, str] = {}
    current: str | None = None
    level: int | None = None
    inside = False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if _ARGS_HEADER.fullmatch(stripped):
            inside, current, level = True, None, None
            continue
        if not inside or not stripped:
            continue
        if indent == 0:
            inside = False  # the next section
            continue
        match = _ARG_LINE.fullmatch(stripped)
        if match and (level is None or indent <= level):
            level = indent
            current = match.group(1).lstrip("*")
            described[current] = match.group(2).strip()
        elif current is not None:
            described[current] = f"{described[current]} {stripped}".strip()
    return " ".join(summary_lines), described

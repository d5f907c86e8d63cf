"""What `spec init` drafts from: a file of tool definitions (its format told by its shape,
or named), BFCL's function docs, or Python functions (`python_tools`).

The definitions are read by the spec loader's own reader (`specs.tool_definitions`), so a
draft and `--specs FILE` see the same tools; a file that is no format of tool definitions
is one input error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolscore.errors import SpecError
from toolscore.specs.parsing import parse_document
from toolscore.specs.tool_definitions import FORMATS, Definition, ShapeError, read_definitions

DRAFT_FORMATS = (*FORMATS, "bfcl")
"""The formats `spec init --format` accepts."""
_BFCL_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "bool": "boolean",
    "any": None,
}
"""BFCL's Python-style type names as JSON Schema's (`any` has no type)."""


@dataclass(frozen=True)
class Source:
    """The tool definitions of a file, and the format they are in."""

    format: str
    definitions: list[Definition]
    notes: Mapping[str, list[str]] = field(default_factory=dict)
    """Comments for a tool's draft, by tool name (BFCL docs that differ from line to line)."""


def read_source(path: str | Path, wanted: str | None = None) -> Source:
    """The tool definitions of `path`, in the format `wanted` (None: told by the shape)."""
    source = str(path)
    try:
        content = Path(path).read_bytes()
    except OSError as error:
        raise SpecError(source, f"cannot read: {error.strerror or error}") from None
    notes: dict[str, list[str]] = {}
    data = _bfcl_lines(content, notes) if wanted == "bfcl" else None
    if data is None:
        try:
            data = parse_document(content, source)
        except SpecError:
            data = _bfcl_lines(content, notes)
            if data is None:
                raise
    if wanted == "bfcl" or (wanted is None and _is_bfcl(data)):
        if not isinstance(data, list):
            raise SpecError(
                source, "BFCL function docs are a list, or JSON Lines of functions or of 'function'"
            )
        data = [_bfcl_function(function) for function in data]
        found, definitions = _read(data, source)
        return Source("bfcl", definitions, notes)
    found, definitions = _read(data, source)
    if wanted is not None and found != wanted:
        raise SpecError(source, f"holds {found} tool definitions, not {wanted} (see --format)")
    return Source(found, definitions)


def _read(data: Any, source: str) -> tuple[str, list[Definition]]:
    if isinstance(data, Mapping) and isinstance(data.get("tools"), Mapping):
        raise SpecError(source, "is a native spec already, not tool definitions")
    try:
        found, entries = read_definitions(data)
    except ShapeError as error:
        raise SpecError(source, error.message, field=error.where) from None
    definitions: list[Definition] = []
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, ShapeError):
            raise SpecError(source, entry.message, field=entry.where)
        if entry.name in seen:
            raise SpecError(
                source, f"tool {entry.name!r} is defined twice", field=f"{entry.base}.name"
            )
        seen.add(entry.name)
        definitions.append(entry)
    if not definitions:
        raise SpecError(source, "holds no tool definitions")
    return found, definitions


def _bfcl_lines(content: bytes, notes: dict[str, list[str]]) -> list[Any] | None:
    """The functions of a BFCL category file (JSON Lines, each entry with a `function`
    list) or of a multi-turn function doc (JSON Lines, a function a line), each name once:
    where lines document one function differently (BFCL defines tools per case), the union
    of their parameters, the first line's schema of each, with a note for the draft. None
    when the content is not such a file."""
    functions: list[Any] = []
    seen: dict[str, Any] = {}
    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        listed = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and listed is None and {"name", "parameters"} <= entry.keys():
            listed = [entry]  # a multi-turn function doc: one function a line
        if not isinstance(listed, list):
            return None
        for function in listed:
            name = function.get("name") if isinstance(function, dict) else None
            if name in seen:
                if seen[name] != function:
                    _merge(seen[name], function, number, notes.setdefault(str(name), []))
                continue
            kept = dict(function) if isinstance(function, dict) else function
            seen[str(name)] = kept
            functions.append(kept)
    return functions or None


def _merge(first: dict[str, Any], other: Any, line: int, notes: list[str]) -> None:
    """Add `other`'s parameters that `first` lacks to it (line `line` documents the same
    function differently), and say so in `notes`."""
    if not isinstance(other, dict):
        return
    params, more = first.get("parameters"), other.get("parameters")
    if not isinstance(params, dict) or not isinstance(more, dict):
        return
    known, extra = params.get("properties"), more.get("properties")
    if not isinstance(known, dict) or not isinstance(extra, dict):
        return
    added = [name for name in extra if name not in known]
    differ = [name for name in extra if name in known and known[name] != extra[name]]
    if added:
        params = first["parameters"] = {
            **params,
            "properties": {**known, **{n: extra[n] for n in added}},
        }
    if added or differ:
        parts = [f"line {line} documents it differently"]
        if added:
            parts.append(f"adds {', '.join(added)}")
        if differ:
            parts.append(f"with other schemas for {', '.join(differ)} (the first line's kept)")
        notes.append("review: " + "; ".join(parts))


def _is_bfcl(data: Any) -> bool:
    """Whether a list of definitions uses BFCL's Python-style types (`"type": "dict"`)."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(
            isinstance(item, Mapping)
            and isinstance(item.get("parameters"), Mapping)
            and item["parameters"].get("type") == "dict"
            for item in data
        )
    )


def _bfcl_function(function: Any) -> Any:
    if not isinstance(function, Mapping):
        return function
    converted = dict(function)
    if "parameters" in converted:
        converted["parameters"] = bfcl_schema(converted["parameters"])
    return converted


def bfcl_schema(schema: Any) -> Any:
    """A BFCL parameter schema as JSON Schema: its type names translated, in every
    subschema."""
    if not isinstance(schema, Mapping):
        return schema
    converted = dict(schema)
    types = converted.get("type")
    if isinstance(types, str) and types.lower() in _BFCL_TYPES:
        translated = _BFCL_TYPES[types.lower()]
        if translated is None:
            del converted["type"]
        else:
            converted["type"] = translated
    if isinstance(converted.get("properties"), Mapping):
        converted["properties"] = {k: bfcl_schema(v) for k, v in converted["properties"].items()}
    if "items" in converted:
        converted["items"] = bfcl_schema(converted["items"])
    return converted

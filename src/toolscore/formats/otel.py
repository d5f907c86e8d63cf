"""OpenTelemetry GenAI spans: each `execute_tool` span is one call, with its result attached.

Accepts a list of spans or an OTLP JSON export (`resourceSpans` / `scopeSpans` / `spans`),
attributes as OTLP key/value lists or plain objects, and the older attribute spellings still
emitted by instrumentations (`gen_ai.tool.arguments`, `gen_ai.tool.input`, ...). Tool spans are
ordered by start time. Spans hold no user messages, so every call is in turn 0.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from toolscore.formats.transcript import Transcript
from toolscore.model import MISSING

NAME = ("gen_ai.tool.name", "tool.name")
CALL_ID = ("gen_ai.tool.call.id",)
ARGUMENTS = ("gen_ai.tool.call.arguments", "gen_ai.tool.arguments", "gen_ai.tool.input")
RESULT = ("gen_ai.tool.call.result", "gen_ai.tool.result", "gen_ai.tool.output")
ERROR_STATUS = frozenset({2, "2", "ERROR", "STATUS_CODE_ERROR"})
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Span = tuple[str, Mapping[str, Any], dict[str, Any]]
"""(field path, span, decoded attributes)"""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read OpenTelemetry spans into `t`, one call per tool span."""
    tools = [span for span in _spans(node, key, t) if _is_tool(span)]
    starts = [_start(where, span, t) for where, span, _ in tools]
    if all(start is not None for start in starts):
        order = sorted(range(len(tools)), key=lambda i: starts[i] or 0)
    else:
        order = list(range(len(tools)))
        t.notes.append("otel: spans without a start time kept in file order")
    unrecorded = 0
    for _, span, attributes in (tools[i] for i in order):
        args = _first(attributes, ARGUMENTS, None)
        unrecorded += args is None
        t.call(
            _first(attributes, NAME, _name_from(span.get("name"))),
            args,
            _first(attributes, CALL_ID, None),
            result=_first(attributes, RESULT, MISSING),
            error=_failed(span, attributes),
        )
    if unrecorded:
        t.notes.append(f"otel: tool spans without recorded arguments ({unrecorded})")


def _spans(node: Any, key: str, t: Transcript) -> Iterator[Span]:
    if key == "resourceSpans":
        yield from _export(node, key, t)
    elif isinstance(node, Mapping):
        yield from _export(node.get("resourceSpans"), f"{key}.resourceSpans", t)
    else:
        for i, span in enumerate(t.list_of(node, key)):
            yield _span(span, f"{key}[{i}]", t)


def _export(node: Any, where: str, t: Transcript) -> Iterator[Span]:
    for i, resource in enumerate(t.list_of(node, where)):
        at = f"{where}[{i}]"
        fields = t.mapping(resource, at)
        legacy = "instrumentationLibrarySpans" in fields and "scopeSpans" not in fields
        scopes = "instrumentationLibrarySpans" if legacy else "scopeSpans"
        for j, scope in enumerate(t.list_of(fields.get(scopes, []), f"{at}.{scopes}")):
            inner = f"{at}.{scopes}[{j}]"
            spans = t.mapping(scope, inner).get("spans", [])
            for k, span in enumerate(t.list_of(spans, f"{inner}.spans")):
                yield _span(span, f"{inner}.spans[{k}]", t)


def _span(node: Any, where: str, t: Transcript) -> Span:
    span = t.mapping(node, where)
    attributes = span.get("attributes")
    if attributes is None or isinstance(attributes, Mapping):
        return where, span, dict(attributes or {})
    return where, span, _pairs(attributes, f"{where}.attributes", t)


def _pairs(node: Any, where: str, t: Transcript) -> dict[str, Any]:
    """OTLP `[{"key": ..., "value": {"stringValue": ...}}]` as a plain object."""
    pairs: dict[str, Any] = {}
    for i, pair in enumerate(t.list_of(node, where)):
        key = t.mapping(pair, f"{where}[{i}]").get("key")
        if not isinstance(key, str):
            raise t.error(f"{where}[{i}].key", "every attribute needs a string key")
        pairs[key] = _value(pair.get("value"), f"{where}[{i}].value", t)
    return pairs


def _value(node: Any, where: str, t: Transcript) -> Any:
    """An OTLP AnyValue as plain JSON (int64 values come as strings in OTLP JSON)."""
    if node is None:
        return None
    value = t.mapping(node, where)
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            raise t.error(f"{where}.intValue", "must be an integer") from None
    if "arrayValue" in value:
        items = t.mapping(value["arrayValue"], f"{where}.arrayValue").get("values", [])
        at = f"{where}.arrayValue.values"
        return [_value(item, f"{at}[{i}]", t) for i, item in enumerate(t.list_of(items, at))]
    if "kvlistValue" in value:
        pairs = t.mapping(value["kvlistValue"], f"{where}.kvlistValue").get("values", [])
        return _pairs(pairs, f"{where}.kvlistValue.values", t)
    for kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if kind in value:
            return value[kind]
    return None


def _is_tool(span: Span) -> bool:
    _, node, attributes = span
    name = node.get("name")
    return (isinstance(name, str) and name.startswith("execute_tool")) or attributes.get(
        "gen_ai.operation.name"
    ) == "execute_tool"


def _start(where: str, span: Mapping[str, Any], t: Transcript) -> int | None:
    """Start time in nanoseconds: OTLP `startTimeUnixNano`, or the SDK's ISO `start_time`."""
    for key in ("startTimeUnixNano", "start_time"):
        value = span.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            if value.isdigit():
                return int(value)
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
                return (moment - EPOCH) // timedelta(microseconds=1) * 1000
        raise t.error(f"{where}.{key}", "must be a time in nanoseconds since the epoch")
    return None


def _first(attributes: Mapping[str, Any], keys: tuple[str, ...], default: Any) -> Any:
    return next((attributes[key] for key in keys if key in attributes), default)


def _name_from(span_name: Any) -> str | None:
    """`execute_tool get_order` -> `get_order` (the span name the conventions recommend)."""
    if isinstance(span_name, str):
        return span_name.removeprefix("execute_tool").strip() or None
    return None


def _failed(span: Mapping[str, Any], attributes: Mapping[str, Any]) -> bool:
    status = span.get("status")
    if isinstance(status, Mapping):
        code = status.get("code", status.get("status_code"))
        if isinstance(code, int | str) and code in ERROR_STATUS:
            return True
    return attributes.get("error.type") is not None

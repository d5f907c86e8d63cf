"""OpenTelemetry GenAI spans: each `execute_tool` span is one call, with its result attached.

Accepts a list of spans or an OTLP JSON export (`resourceSpans` / `scopeSpans` / `spans`),
attributes as OTLP key/value lists or plain objects, and the older attribute spellings still
emitted by instrumentations (`gen_ai.tool.arguments`, `gen_ai.tool.input`, ...). Tool spans are
ordered by start time. Spans hold no user messages, so every call is in turn 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from toolscore.formats.transcript import Transcript, UnreadableError
from toolscore.model import MISSING
from toolscore.rules import show

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


def _spans(node: Any, key: str, t: Transcript) -> list[Span]:
    """Every readable span of a list of spans or an OTLP export (the others counted unread)."""
    spans: list[Span] = []
    if key == "resourceSpans":
        _export(t.items(node, key), key, t, spans)
    elif isinstance(node, Mapping):
        where = f"{key}.resourceSpans"
        _export(t.items(node.get("resourceSpans"), where), where, t, spans)
    else:
        for i, span in enumerate(t.items(node, key)):
            with t.part():
                spans.append(_span(span, f"{key}[{i}]", t))
    return spans


def _export(resources: list[Any], where: str, t: Transcript, spans: list[Span]) -> None:
    for i, resource in enumerate(resources):
        at = f"{where}[{i}]"
        with t.part():
            fields = t.mapping(resource, at)
            legacy = "instrumentationLibrarySpans" in fields and "scopeSpans" not in fields
            scopes = "instrumentationLibrarySpans" if legacy else "scopeSpans"
            for j, scope in enumerate(t.list_of(_listed(fields.get(scopes)), f"{at}.{scopes}")):
                inner = f"{at}.{scopes}[{j}]"
                with t.part():
                    found = _listed(t.mapping(scope, inner).get("spans"))
                    for k, span in enumerate(t.list_of(found, f"{inner}.spans")):
                        with t.part():
                            spans.append(_span(span, f"{inner}.spans[{k}]", t))


def _listed(node: Any) -> Any:
    """A repeated field, which OTLP JSON may leave out or write as null when it is empty."""
    return [] if node is None else node


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
            raise UnreadableError(f"{where}[{i}].key", "every attribute needs a string key")
        pairs[key] = _value(pair.get("value"), f"{where}[{i}].value", t)
    return pairs


def _value(node: Any, where: str, t: Transcript) -> Any:
    """An OTLP AnyValue as plain JSON (int64 values come as strings in OTLP JSON)."""
    if node is None:
        return None
    value = t.mapping(node, where)
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, str):
            number = _integer(number.removeprefix("-"))
            number = -number if number is not None and value["intValue"][0] == "-" else number
        if not isinstance(number, int) or isinstance(number, bool):
            raise UnreadableError(f"{where}.intValue", "must be an integer")
        return number
    if "arrayValue" in value:
        items = _listed(t.mapping(value["arrayValue"], f"{where}.arrayValue").get("values"))
        at = f"{where}.arrayValue.values"
        return [_value(item, f"{at}[{i}]", t) for i, item in enumerate(t.list_of(items, at))]
    if "kvlistValue" in value:
        pairs = _listed(t.mapping(value["kvlistValue"], f"{where}.kvlistValue").get("values"))
        return _pairs(pairs, f"{where}.kvlistValue.values", t)
    for kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if kind in value:
            return value[kind]
    if value:
        raise UnreadableError(where, f"not an OTLP value: {show(next(iter(value)))}")
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
            number = _integer(value)
            if number is not None:
                return number
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
                return (moment - EPOCH) // timedelta(microseconds=1) * 1000
        t.unread(f"{where}.{key}", "must be a time in nanoseconds since the epoch")
        return None
    return None


def _integer(text: str) -> int | None:
    """The value of a string of at most 20 ASCII digits (an int64 in OTLP JSON), else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


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

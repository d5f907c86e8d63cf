"""OpenTelemetry GenAI spans: tool spans and the tool calls of inference spans, in time order.

Accepts a list of spans or an OTLP JSON export (`resourceSpans` / `scopeSpans` / `spans`),
attributes as OTLP key/value lists or plain objects. Spans are ordered by start time.

Two kinds of span hold calls. A *tool span* (`execute_tool`, or an OpenInference TOOL span) is
one call with its result, in the attribute spellings instrumentations use
(`gen_ai.tool.call.arguments`, `gen_ai.tool.arguments`, OpenInference `input.value`, ...).
An *inference span* (chat) lists the calls the model asked for in its output messages and the
results and user messages in its input (`otel_messages.py`). Each call is scored once:
- every tool span is a call;
- an inference span's call is scored unless a tool span or an earlier inference span has its
  id; one without an id is scored only when the trace has no tool span;
- when some tool span has no call id, no inference span's call is scored (the tool spans
  record them, and nothing tells which are the same).
A tool span whose id a model output asked for takes the place of that request (the order the
model asked in); the others keep their own start time.
The turn of a call is the number of genuine user messages in the input of the latest
inference span before it (0 when no span records its input messages).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from toolscore.core.model import MISSING
from toolscore.core.values import show
from toolscore.inputs.formats.otel_messages import OPENINFERENCE_KIND, Said, is_inference, read_span
from toolscore.inputs.formats.transcript import Transcript, UnreadableError, ident
from toolscore.inputs.otlp_ids import SPAN_ID_HEX, TRACE_ID_HEX, hex_id

NAME = ("gen_ai.tool.name", "tool.name")
CALL_ID = ("gen_ai.tool.call.id", "tool_call.id")
ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.arguments",
    "gen_ai.tool.input",
    "input.value",  # OpenInference (its `tool.parameters` is the tool's schema, not the call)
)
RESULT = ("gen_ai.tool.call.result", "gen_ai.tool.result", "gen_ai.tool.output", "output.value")
ERROR_STATUS = frozenset({2, "2", "ERROR", "STATUS_CODE_ERROR"})
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Span = tuple[str, Mapping[str, Any], dict[str, Any]]
"""(field path, span, decoded attributes)"""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read OpenTelemetry spans into `t`: tool spans and inference spans' calls, in time order."""
    spans = _spans(node, key, t)
    t.trace = trace_link(spans)
    timeline: list[tuple[Span, Said | None]] = []
    for span in spans:
        if _is_tool(span):
            timeline.append((span, None))
        elif is_inference(span[1].get("name"), span[2]):
            said = read_span(span[2], span[0], t)
            if not said.empty:
                timeline.append((span, said))
    starts = [_start(where, span, t) for (where, span, _), _ in timeline]
    if all(start is not None for start in starts):
        order = sorted(range(len(timeline)), key=lambda i: starts[i] or 0)
    else:
        order = list(range(len(timeline)))
        t.notes.append("otel: spans without a start time kept in file order")
    _read_timeline([timeline[i] for i in order], t)


def _read_timeline(timeline: list[tuple[Span, Said | None]], t: Transcript) -> None:
    """Read the calls in time order; a tool span whose call a model output asked for takes
    that call's place (the order the model asked in), the others their own."""
    tools = [span for span, said in timeline if said is None]
    by_id = {ident(_first(span[2], CALL_ID, None)): span for span in tools}
    trust_ids = None not in by_id  # every tool span has its call id
    results: dict[Any, Any] = {}
    for _, said in timeline:
        for answered, value in said.results.items() if said else ():
            results.setdefault(answered, value)
    done: set[int] = set()
    seen: set[str] = set()
    inferred = left = 0
    for span, said in timeline:
        if said is None:
            if id(span) not in done:
                _tool_call(span, t)
            continue
        while said.user_turns is not None and t.turn < said.user_turns:
            t.user_turn()
        if said.answered:
            t.assistant_message(said.text)
        for call in said.calls:
            call_id = ident(call.id)
            if call_id is not None and call_id in seen:
                continue  # asked for again in a later model input's history, or twice
            if call_id is not None:
                seen.add(call_id)
            tool = by_id.get(call_id) if call_id is not None else None
            if tool is not None:
                if id(tool) not in done:
                    done.add(id(tool))
                    _tool_call(tool, t)
            elif tools and (not trust_ids or call_id is None):
                left += 1
            else:
                inferred += 1
                t.call(call.name, call.arguments, call_id, result=results.get(call_id, MISSING))
    unrecorded = sum(_first(span[2], ARGUMENTS, None) is None for span in tools)
    if unrecorded:
        t.notes.append(f"otel: tool spans without recorded arguments ({unrecorded})")
    if inferred:
        t.notes.append(f"otel: calls read from inference spans ({inferred})")
    if left:
        t.notes.append(
            f"otel: inference-span calls left to the tool spans, which lack call ids ({left})"
        )


def _tool_call(span: Span, t: Transcript) -> None:
    _, node, attributes = span
    t.call(
        _first(attributes, NAME, _name_from(node.get("name"))),
        _first(attributes, ARGUMENTS, None),
        _first(attributes, CALL_ID, None),
        result=_first(attributes, RESULT, MISSING),
        error=_failed(node, attributes),
    )


def trace_link(spans: list[Span]) -> tuple[str, str | None] | None:
    """The trace (hex id) and span the verdict on these spans belongs to: the root span that
    started last (the conversation's latest turn), else the first span's trace alone. Ids
    in base64 (protobuf's JSON mapping) are read as their hex (otlp_ids.py)."""
    best: tuple[int, str, str] | None = None
    first: str | None = None
    for _, span, _ in spans:
        context = span.get("context")
        context = context if isinstance(context, Mapping) else {}
        trace = hex_id(span.get("traceId", context.get("trace_id")), TRACE_ID_HEX)
        if trace is None:
            continue
        first = first or trace
        parent = span.get("parentSpanId", span.get("parent_id"))
        own = hex_id(span.get("spanId", context.get("span_id")), SPAN_ID_HEX)
        if own is not None and not parent:
            start = _start_quietly(span)
            if best is None or start >= best[0]:
                best = (start, trace, own)
    if best is not None:
        return best[1], best[2]
    return None if first is None else (first, None)


def _start_quietly(span: Mapping[str, Any]) -> int:
    quiet = Transcript("", None, "otel")
    return _start("", span, quiet) or 0


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
    """An `execute_tool` span of the GenAI conventions, or an OpenInference TOOL span."""
    _, node, attributes = span
    name = node.get("name")
    if isinstance(name, str) and name.startswith("execute_tool"):
        return True
    if attributes.get("gen_ai.operation.name") == "execute_tool":
        return True
    kind = attributes.get(OPENINFERENCE_KIND)
    return isinstance(kind, str) and kind.upper() == "TOOL"


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

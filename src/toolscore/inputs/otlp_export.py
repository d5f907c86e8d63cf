"""An OpenTelemetry Collector file export of traces, turned into one outputs line per group.

The collector's file exporter writes JSON Lines, each line an OTLP `{"resourceSpans": [...]}`
holding spans of many traces, without case ids. `score --group-by KEY` makes one outputs line
`{"id": GROUP, "format": "otel", "spans": [...]}` of every group of spans, in the order the
groups first appear: KEY `trace_id` (the default) groups by the span's `traceId` (hex, as
OTLP JSON writes it; an id in base64, as protobuf's JSON mapping writes it, is read as its
hex); any other KEY (`gen_ai.conversation.id`, `session.id`, ...) is an attribute
of the span, else of its resource, else of another span of its trace (instrumentations often
set it on the agent's span only). Spans whose trace has no value of KEY at all are counted,
skipped, and one warning line says so.

Only spans that can hold calls are kept (tool spans, inference spans, and each trace's root
span, which the verdict links to), and of each only what the otel reader reads (its ids,
name, start time, status code and the attributes named in formats/otel.py and
otel_messages.py), so memory grows with those spans and the groups, never with the rest of
the export. A trace may keep at most `max_trace_spans` spans (100,000, or
$TOOLSCORE_MAX_TRACE_SPANS): one past it is an input error naming the line and the trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from toolscore.core.values import json_type
from toolscore.errors import InputError
from toolscore.inputs.bounds import env_limit, max_line_bytes
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.formats.otel import ARGUMENTS, CALL_ID, NAME, RESULT
from toolscore.inputs.formats.otel_messages import (
    INPUT,
    OPENINFERENCE,
    OPENINFERENCE_KIND,
    OPENLLMETRY,
    OUTPUT,
)
from toolscore.inputs.lines import bounded_lines
from toolscore.inputs.otlp_ids import TRACE_ID_HEX, hex_id

TRACE_ID = "trace_id"
MAX_TRACE_SPANS = 100_000
"""The most spans one trace may keep by default: far past any agent's run, and a bound on
what one trace can make toolscore hold."""
ENV_VAR = "TOOLSCORE_MAX_TRACE_SPANS"
"""The environment variable that sets another bound."""
SPAN_FIELDS = ("traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano")
"""The fields of a kept span the otel reader reads, besides its status and attributes."""
READ_ATTRIBUTES = frozenset(
    {
        *NAME,
        *CALL_ID,
        *ARGUMENTS,
        *RESULT,
        INPUT,
        OUTPUT,
        OPENINFERENCE_KIND,
        "gen_ai.operation.name",
        "llm.request.type",
        "error.type",
    }
)
"""The attributes of a kept span the otel reader reads; the others are dropped."""
READ_PREFIXES = tuple(
    prefix
    for spelling in (OPENLLMETRY, OPENINFERENCE)
    for prefix in (spelling.prompt, spelling.completion)
)
"""The numbered message attributes the otel reader reads (`gen_ai.completion.0.content`)."""
KEPT_OPERATIONS = frozenset({"execute_tool", "chat", "generate_content", "text_completion"})
KEPT_PREFIXES = ("gen_ai.tool.", "gen_ai.completion.", "gen_ai.output.messages", "llm.output")
KEPT_KINDS = frozenset({"TOOL", "LLM"})


@dataclass
class _Trace:
    value: str | None = None
    """The first value of the grouping key any span of the trace had."""
    spans: list[tuple[str | None, bytes]] = field(default_factory=list)
    """The kept spans, as JSON (a fifth of the memory of the parsed objects), with their
    own value of the key (None: the trace's)."""


def convert(path: str, conversion: Conversion, out: IO[bytes]) -> None:
    """Write one outputs line per group of the export's spans (see the module's docstring)."""
    if conversion.kind != "outputs":
        raise InputError(path, "an OpenTelemetry collector export holds outputs, not cases")
    key = conversion.group_by or TRACE_ID
    traces: dict[str, _Trace] = {}
    bound = max_trace_spans(path)
    cap = max_line_bytes(path)
    with open(path, "rb") as source:
        for number, line in enumerate(bounded_lines(source, path, cap), 1):
            if line.strip():
                _read_line(path, number, line, key, traces, bound)
    groups: dict[str, list[bytes]] = {}
    skipped = lacking = 0
    for trace in traces.values():
        if trace.value is not None:
            groups.setdefault(trace.value, [])
        lacking += trace.value is None
        for value, span in trace.spans:
            group = value or trace.value
            if group is None:
                skipped += 1
            else:
                groups.setdefault(group, []).append(span)
    for group, spans in groups.items():
        head = orjson.dumps({"id": group, "format": "otel"})[:-1]
        out.write(head + b',"spans":[' + b",".join(spans) + b"]}\n")
    if skipped:
        import logging  # noqa: PLC0415 - not at start-up: `score` imports this module's sniffer

        logging.getLogger("toolscore").warning(
            "%s: %d spans of %d traces lack %s: skipped (try --group-by trace_id)",
            path,
            skipped,
            lacking,
            key,
        )


def max_trace_spans(path: str) -> int:
    """The most spans a trace may keep: $TOOLSCORE_MAX_TRACE_SPANS, else 100,000."""
    return env_limit(ENV_VAR, MAX_TRACE_SPANS, path, "spans")


def _read_line(
    path: str, number: int, line: bytes, key: str, traces: dict[str, _Trace], bound: int
) -> None:
    try:
        data = orjson.loads(line.rstrip())  # a broken line ends at its end, not in a string
    except orjson.JSONDecodeError as error:
        raise InputError(path, f"not valid JSON ({error.msg})", line=number) from None
    if not isinstance(data, dict) or "resourceSpans" not in data:
        message = "every line of a collector export is an object holding resourceSpans"
        raise InputError(path, message, line=number, field="resourceSpans")
    if "id" in data:
        message = "a collector export has no ids; give every outputs line an id, or none"
        raise InputError(path, message, line=number, field="id")

    def listed(node: Any, where: str) -> list[Any]:
        if node is None:
            return []
        if not isinstance(node, list):
            message = f"must be a list, got {json_type(node)}"
            raise InputError(path, message, line=number, field=where)
        return node

    def mapping(node: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(node, dict):
            message = f"must be an object, got {json_type(node)}"
            raise InputError(path, message, line=number, field=where)
        return node

    for i, resource in enumerate(listed(data["resourceSpans"], "resourceSpans")):
        at = f"resourceSpans[{i}]"
        fields = mapping(resource, at)
        inherited = _attribute(mapping(fields.get("resource") or {}, f"{at}.resource"), key)
        scopes = "scopeSpans" if "scopeSpans" in fields else "instrumentationLibrarySpans"
        for j, scope in enumerate(listed(fields.get(scopes), f"{at}.{scopes}")):
            inner = f"{at}.{scopes}[{j}]"
            for k, node in enumerate(listed(mapping(scope, inner).get("spans"), f"{inner}.spans")):
                where = f"{inner}.spans[{k}]"
                span = mapping(node, where)
                trace_id = span.get("traceId")
                if not isinstance(trace_id, str) or not trace_id:
                    message = "every span needs its traceId (hex)"
                    raise InputError(path, message, line=number, field=f"{where}.traceId")
                trace_id = hex_id(trace_id, TRACE_ID_HEX) or trace_id  # base64 read as its hex
                trace = traces.setdefault(trace_id, _Trace())
                value = trace_id if key == TRACE_ID else _attribute(span, key) or inherited
                if trace.value is None:
                    trace.value = value
                if _holds_calls(span):
                    if len(trace.spans) >= bound:
                        message = (
                            f"trace {trace_id} holds more than {bound:,} tool, inference and "
                            f"root spans (the bound; ${ENV_VAR} sets another)"
                        )
                        raise InputError(path, message, line=number, field=where)
                    trace.spans.append((value, _compact(span)))


def _compact(span: Mapping[str, Any]) -> bytes:
    """What the otel reader reads of a span, as JSON in bytes of its own size: orjson's
    result keeps a buffer of at least 4 KiB, and thousands of kept spans would hold that
    much each."""
    kept = {name: span[name] for name in SPAN_FIELDS if name in span}
    status = span.get("status")
    if isinstance(status, dict):
        kept["status"] = {name: status[name] for name in ("code", "status_code") if name in status}
    elif status is not None:
        kept["status"] = status
    attributes = span.get("attributes")
    if isinstance(attributes, list):
        kept["attributes"] = [pair for pair in attributes if _read_attribute(pair)]
    elif attributes is not None:
        kept["attributes"] = attributes  # not OTLP's list: the reader says what is wrong
    return bytes(memoryview(orjson.dumps(kept)))


def _read_attribute(pair: Any) -> bool:
    """Whether the otel reader reads this attribute; a malformed pair is kept, for the
    reader to report."""
    name = pair.get("key") if isinstance(pair, dict) else None
    if not isinstance(name, str):
        return True
    return name in READ_ATTRIBUTES or name.startswith(READ_PREFIXES)


def _attribute(node: Mapping[str, Any], key: str) -> str | None:
    """The value of attribute `key` of a span or resource as text, None when it lacks one."""
    attributes = node.get("attributes")
    if not isinstance(attributes, list):
        return None
    for pair in attributes:
        if isinstance(pair, dict) and pair.get("key") == key:
            value = _plain(pair.get("value"))
            if value is None or value == "":
                return None
            return value if isinstance(value, str) else orjson.dumps(value).decode()
    return None


def _plain(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    for kind in ("stringValue", "intValue", "boolValue", "doubleValue"):
        if kind in value:
            return value[kind]
    return None


def _holds_calls(span: Mapping[str, Any]) -> bool:
    """A span the otel reader may take calls from, or a root span (the verdict's link)."""
    if not span.get("parentSpanId"):
        return True
    name = span.get("name")
    if isinstance(name, str) and name.startswith(("execute_tool", "chat")):
        return True
    attributes = span.get("attributes")
    for pair in attributes if isinstance(attributes, list) else ():
        name = pair.get("key") if isinstance(pair, dict) else None
        if not isinstance(name, str):
            continue
        if name in ("gen_ai.operation.name", "openinference.span.kind"):
            value = _plain(pair.get("value"))
            if isinstance(value, str) and value in KEPT_OPERATIONS | KEPT_KINDS:
                return True
        elif name.startswith(KEPT_PREFIXES) or name == "llm.request.type":
            return True
    return False

"""Write `collector.jsonl`, an OpenTelemetry Collector file export made by OpenTelemetry's own SDK.

Four traces of a support agent are recorded with opentelemetry-sdk (fixed ids and times), in
the three spellings toolscore reads from inference spans:
- trace 1 (conversation conv-1, turn 1): chat spans with `gen_ai.input.messages` /
  `gen_ai.output.messages` and an `execute_tool` span for the call (the tool span wins);
- trace 2 (conv-1, turn 2): chat spans only, two parallel refunds asked for in the output
  messages, their results in the next chat span's input;
- trace 3 (conv-2): OpenInference (Arize Phoenix) LLM and TOOL spans, without call ids on the
  TOOL span (so the TOOL span is the call);
- trace 4 (conv-3): OpenLLMetry's flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`.
The conversation id is set on each trace's root span only. The spans are encoded by the SDK's
OTLP encoder (opentelemetry-exporter-otlp-proto-common) and written as the collector writes
OTLP JSON: protobuf's JSON mapping, except trace and span ids in hex (not base64), two
export requests per line, like batches. `tests/report/test_otel_export.py` runs `build()` again and
fails when the SDK's output drifts from the committed file.
Run from the repository root: `python tests/formats/otel_export/make_fixtures.py`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

HERE = Path(__file__).parent
START = 1_764_450_000_000_000_000
SECOND = 1_000_000_000

ASK_1 = "Where is order-12?"
ASK_2 = "Refund 12.50 EUR on order-77 and 5 EUR on order-31."
SHIPPED = {"order_id": "order-12", "status": "shipped"}
PARIS = json.dumps({"location": "Paris"})


class FixedIds(IdGenerator):
    """Trace ids 1, 2, ... and span ids 1, 2, ... in the order they are asked for."""

    def __init__(self) -> None:
        self.traces = 0
        self.spans = 0

    def generate_trace_id(self) -> int:
        self.traces += 1
        return 0x5B8EFFF798038103D269B633813F0000 + self.traces

    def generate_span_id(self) -> int:
        self.spans += 1
        return 0xA000000000000000 + self.spans


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": args}


def _response(call_id: str, value: Any) -> dict[str, Any]:
    message = {"type": "tool_call_response", "id": call_id, "response": value}
    return {"role": "tool", "parts": [message]}


def _messages(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages)


def record() -> list[ReadableSpan]:
    """The four traces, as the SDK's in-memory exporter keeps them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource({"service.name": "support-agent"}), id_generator=FixedIds()
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("support-agent", "1.0")
    clock = iter(range(START, START + 1000 * SECOND, SECOND))

    def span(name: str, parent: Any, attributes: dict[str, Any]) -> None:
        context = trace.set_span_in_context(parent) if parent is not None else None
        child = tracer.start_span(name, context, attributes=attributes, start_time=next(clock))
        child.end(end_time=next(clock))

    def root(name: str, attributes: dict[str, Any]) -> Any:
        return tracer.start_span(name, attributes=attributes, start_time=next(clock))

    turn_1 = [_text("user", ASK_1)]
    lookup = {
        "role": "assistant",
        "parts": [_call("call_G1", "get_order", {"order_id": "order-12"})],
    }
    conversation_1 = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-1"}

    agent = root("invoke_agent support", conversation_1)
    span("chat gpt-4.1", agent, {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": _messages(turn_1),
        "gen_ai.output.messages": _messages([{**lookup, "finish_reason": "tool_call"}]),
    })  # fmt: skip
    span("execute_tool get_order", agent, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_order",
        "gen_ai.tool.call.id": "call_G1",
        "gen_ai.tool.call.arguments": json.dumps({"order_id": "order-12"}),
        "gen_ai.tool.call.result": json.dumps(SHIPPED),
    })  # fmt: skip
    history = [*turn_1, lookup, _response("call_G1", SHIPPED)]
    answer = _text("assistant", "Order-12 has shipped.")
    span("chat gpt-4.1", agent, {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": _messages(history),
        "gen_ai.output.messages": _messages([{**answer, "finish_reason": "stop"}]),
    })  # fmt: skip
    agent.end(end_time=next(clock))

    refunds = {"role": "assistant", "parts": [
        _call("call_R1", "refund", {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}),
        _call("call_R2", "refund", {"order_id": "order-31", "amount": 5, "unit": "EUR"}),
    ]}  # fmt: skip
    turn_2 = [*history, answer, _text("user", ASK_2)]
    agent = root("invoke_agent support", conversation_1)
    span("chat gpt-4.1", agent, {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": _messages(turn_2),
        "gen_ai.output.messages": _messages([{**refunds, "finish_reason": "tool_call"}]),
    })  # fmt: skip
    span("chat gpt-4.1", agent, {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": _messages([
            *turn_2, refunds,
            _response("call_R1", {"refund_id": "r-1"}),
            _response("call_R2", "amount exceeds the order total"),
        ]),
        "gen_ai.output.messages": _messages([_text("assistant", "One refund was issued.")]),
    })  # fmt: skip
    agent.end(end_time=next(clock))

    agent = root("agent", {"openinference.span.kind": "AGENT", "gen_ai.conversation.id": "conv-2"})
    span("ChatOpenAI", agent, {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Paris?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_W1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": PARIS,
    })  # fmt: skip
    span("get_weather", agent, {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "tool.parameters": json.dumps({"location": {"type": "string"}}),
        "input.value": PARIS,
        "output.value": "18 C, cloudy",
    })  # fmt: skip
    agent.end(end_time=next(clock))

    agent = root("workflow", {"gen_ai.conversation.id": "conv-3"})
    span("openai.chat", agent, {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Where is order-13?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_L1",
        "gen_ai.completion.0.tool_calls.0.name": "get_order",
        "gen_ai.completion.0.tool_calls.0.arguments": json.dumps({"order_id": "ORDER-13"}),
    })  # fmt: skip
    agent.end(end_time=next(clock))
    return list(exporter.get_finished_spans())


def _hex_ids(node: Any) -> Any:
    """Protobuf's JSON writes bytes in base64; OTLP JSON writes trace and span ids in hex."""
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in ("traceId", "spanId", "parentSpanId") and value
            else _hex_ids(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def build() -> str:
    """The export: the spans in two batches (a line each), as the collector writes them."""
    spans = record()
    half = len(spans) // 2
    lines = []
    for batch in (spans[:half], spans[half:]):
        request = MessageToDict(encode_spans(batch), use_integers_for_enums=True)
        lines.append(json.dumps(_hex_ids(request), separators=(",", ":")))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (HERE / "collector.jsonl").write_text(build(), encoding="utf-8")

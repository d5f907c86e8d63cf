"""What an inference span says: the tool calls in its output, the tool results and user turns
in its input, and its assistant text.

Three spellings are read, the first one a span carries winning for each direction:
- the OpenTelemetry GenAI conventions' `gen_ai.input.messages` / `gen_ai.output.messages`
  (JSON text or structured), messages made of `parts`: `text`, `tool_call` {id, name,
  arguments} and `tool_call_response` {id, response};
- the older flattened attributes OpenLLMetry writes, `gen_ai.prompt.N.{role,content,
  tool_call_id}` and `gen_ai.completion.N.{content,tool_calls.M.{name,arguments,id}}`;
- OpenInference's (Arize Phoenix) `llm.input_messages.N.message.*` and
  `llm.output_messages.N.message.tool_calls.M.tool_call.{id,function.name,function.arguments}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from toolscore.core.values import json_type
from toolscore.inputs.formats.transcript import Transcript, UnreadableError

INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
OPENINFERENCE_KIND = "openinference.span.kind"
INPUT = "gen_ai.input.messages"
OUTPUT = "gen_ai.output.messages"


class Flattened(NamedTuple):
    """Where one instrumentation spells the fields of numbered messages and calls."""

    prompt: str
    completion: str
    message: str
    calls: str
    name: str
    arguments: str
    id: str


OPENLLMETRY = Flattened(
    "gen_ai.prompt.", "gen_ai.completion.", "", "tool_calls.", "name", "arguments", "id"
)
OPENINFERENCE = Flattened(
    "llm.input_messages.",
    "llm.output_messages.",
    "message.",
    "message.tool_calls.",
    "tool_call.function.name",
    "tool_call.function.arguments",
    "tool_call.id",
)


class ToolCall(NamedTuple):
    name: Any
    arguments: Any
    id: Any


@dataclass
class Said:
    """The tool-call story of one inference span; empty when it records no messages."""

    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    """Tool results in its input, by call id."""
    user_turns: int | None = None
    """Genuine user messages in its input (the conversation so far), None when unknown."""
    text: str | None = None
    """The assistant text of its output, None when it has none."""
    answered: bool = False
    """True when its output messages were recorded (an assistant message, calls or not)."""

    @property
    def empty(self) -> bool:
        return not self.answered and not self.results and self.user_turns is None


def is_inference(name: Any, attributes: Mapping[str, Any]) -> bool:
    """A model call: a chat span of the GenAI conventions (`gen_ai.operation.name`, else a
    span name `chat ...`), an OpenLLMetry `llm.request.type` chat span, or an OpenInference
    LLM span."""
    kind = attributes.get(OPENINFERENCE_KIND)
    if isinstance(kind, str) and kind.upper() == "LLM":
        return True
    operation = attributes.get("gen_ai.operation.name")
    if operation is not None:
        return isinstance(operation, str) and operation in INFERENCE_OPERATIONS
    if isinstance(name, str) and (name == "chat" or name.startswith("chat ")):
        return True
    return attributes.get("llm.request.type") in ("chat", "completion")


def read_span(attributes: Mapping[str, Any], where: str, t: Transcript) -> Said:
    """What the inference span with these attributes says (unreadable parts counted on `t`)."""
    said = Said()
    sides = ((INPUT, _input, _flat_input), (OUTPUT, _output, _flat_output))
    for key, read, read_flat in sides:
        if key in attributes:
            at = f"{where}.attributes.{key}"
            with t.part():
                read(_messages(attributes[key], at), at, t, said)
        else:
            for spelling in (OPENLLMETRY, OPENINFERENCE):
                if read_flat(attributes, spelling, said):
                    break
    return said


def _messages(node: Any, where: str) -> list[Any]:
    if isinstance(node, str):
        try:
            node = orjson.loads(node)  # depth-limited: no nesting can exhaust the stack
        except orjson.JSONDecodeError as error:
            raise UnreadableError(where, f"not valid JSON ({error.msg})") from None
    if not isinstance(node, list):
        raise UnreadableError(where, f"must be a list of messages, got {json_type(node)}")
    return node


def _parts(message: Any, where: str, t: Transcript) -> tuple[str | None, list[Any]]:
    fields = t.mapping(message, where)
    role = fields.get("role")
    parts = fields.get("parts")
    if not isinstance(parts, list):
        raise UnreadableError(f"{where}.parts", f"must be a list, got {json_type(parts)}")
    return (role if isinstance(role, str) else None), parts


def _input(messages: list[Any], where: str, t: Transcript, said: Said) -> None:
    said.user_turns = 0
    for i, message in enumerate(messages):
        with t.part():
            role, parts = _parts(message, f"{where}[{i}]", t)
            genuine = False
            for j, part in enumerate(parts):
                block = t.mapping(part, f"{where}[{i}].parts[{j}]")
                if block.get("type") == "tool_call_response":
                    if isinstance(block.get("id"), str):
                        said.results.setdefault(block["id"], block.get("response"))
                else:
                    genuine = True
            said.user_turns += role == "user" and genuine


def _output(messages: list[Any], where: str, t: Transcript, said: Said) -> None:
    said.answered = True
    texts: list[str] = []
    for i, message in enumerate(messages):
        with t.part():
            _, parts = _parts(message, f"{where}[{i}]", t)
            for j, part in enumerate(parts):
                block = t.mapping(part, f"{where}[{i}].parts[{j}]")
                kind = block.get("type")
                if kind == "tool_call":
                    said.calls.append(
                        ToolCall(block.get("name"), block.get("arguments"), block.get("id"))
                    )
                elif kind == "text" and isinstance(block.get("content"), str):
                    texts.append(block["content"])
    said.text = "\n".join(texts) or None


def numbered(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.N.rest` attributes as one object of `rest` fields per N, in the order of N."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix) :].partition(".")
            if rest and index.isascii() and index.isdigit():
                found.setdefault(int(index), {})[rest] = value
    return [found[index] for index in sorted(found)]


def _flat_input(attributes: Mapping[str, Any], spelling: Flattened, said: Said) -> bool:
    messages = numbered(attributes, spelling.prompt)
    if not messages:
        return False
    said.user_turns = 0
    for fields in messages:
        role = fields.get(spelling.message + "role")
        call_id = fields.get(spelling.message + "tool_call_id")
        if role == "tool" and isinstance(call_id, str):
            said.results.setdefault(call_id, fields.get(spelling.message + "content"))
        said.user_turns += role == "user"
    return True


def _flat_output(attributes: Mapping[str, Any], spelling: Flattened, said: Said) -> bool:
    messages = numbered(attributes, spelling.completion)
    if not messages:
        return False
    said.answered = True
    texts = []
    for fields in messages:
        content = fields.get(spelling.message + "content")
        if isinstance(content, str) and content:
            texts.append(content)
        for call in numbered(fields, spelling.calls):
            said.calls.append(
                ToolCall(
                    call.get(spelling.name), call.get(spelling.arguments), call.get(spelling.id)
                )
            )
    said.text = "\n".join(texts) or None
    return True

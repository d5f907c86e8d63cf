"""Tell transcript formats apart by their shapes, and say which field gave the format away.

`items`, `contents`, spans and `mcp` name their format by their key alone. A `messages` list
is recognised by the first message that only one format would write (MCP's JSON-RPC
`jsonrpc`, Gemini `parts`, OpenAI
`tool_calls`, Anthropic `tool_use` blocks, Responses `type: function_call`, Inspect AI tool
calls naming their tool in a string `function`, LangChain `type: ai` without a `role`, ...); a
plain text conversation looks the same in every format and reads the same, as OpenAI Chat
Completions.
`type: "message"` is no evidence: the Anthropic SDK's dump of a whole `Message` carries it too.
Fields of the wrong JSON type are no evidence either (and never an error here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

BY_KEY = {
    "items": "openai-responses",
    "contents": "gemini",
    "spans": "otel",
    "resourceSpans": "otel",
    "mcp": "mcp",
}
RESPONSES_ITEMS = frozenset({"function_call", "function_call_output", "reasoning"})
RESPONSES_BLOCKS = frozenset({"input_text", "output_text"})
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
OPENAI_CHAT_KEYS = ("tool_calls", "function_call", "tool_call_id")
INSPECT_BLOCKS = {
    kind: kind for kind in ("reasoning", "image", "audio", "video", "document", "data")
}
INSPECT_BLOCKS["tool_use"] = "tool_type"
"""Inspect content types, by the field no other format's block of that type has (Inspect names
the field after the type; Anthropic's image, document and tool_use blocks have none of them)."""
LANGCHAIN_TYPES = frozenset(
    {"ai", "human", "system", "tool"}
    | {"AIMessageChunk", "HumanMessageChunk", "SystemMessageChunk", "ToolMessageChunk"}
)
"""LangChain's message types; no other format writes them, and a LangChain message has no
`role` (its `tool_calls` and `tool_call_id` would otherwise read as OpenAI Chat's)."""


def detect(key: str, node: Any) -> str:
    """The format of the transcript found under `key`."""
    found = evidence(key, node)
    return found[0] if found else BY_KEY.get(key, "openai-chat")


def evidence(key: str, node: Any) -> tuple[str, str] | None:
    """The format of the first message under `key` that only one format writes, and where."""
    if key != "messages" or not isinstance(node, list):
        return None
    for i, message in enumerate(node):
        if isinstance(message, Mapping):
            found = _sign(message)
            if found:
                return found[0], f"{key}[{i}].{found[1]}"
    return None


def _text(node: Mapping[str, Any], key: str) -> str | None:
    value = node.get(key)
    return value if isinstance(value, str) else None


def _sign(message: Mapping[str, Any]) -> tuple[str, str] | None:
    role = _text(message, "role")
    if "jsonrpc" in message:
        return "mcp", "jsonrpc"
    if "role" not in message and _text(message, "type") in LANGCHAIN_TYPES:
        return "langchain", "type"
    if "parts" in message:
        return "gemini", "parts"
    if role == "model":
        return "gemini", "role"
    if _text(message, "type") in RESPONSES_ITEMS:
        return "openai-responses", "type"
    inspect = _inspect_sign(message)
    if inspect:
        return "inspect", inspect
    for key in OPENAI_CHAT_KEYS:
        if key in message:
            return "openai-chat", key
    if role in ("tool", "function"):
        return "openai-chat", "role"
    content = message.get("content")
    for j, block in enumerate(content if isinstance(content, list) else ()):
        kind = _text(block, "type") if isinstance(block, Mapping) else None
        if kind in INSPECT_BLOCKS and INSPECT_BLOCKS[kind] in block:
            return "inspect", f"content[{j}].{INSPECT_BLOCKS[kind]}"
        if kind in ANTHROPIC_BLOCKS:
            return "anthropic", f"content[{j}].type"
        if kind in RESPONSES_BLOCKS:
            return "openai-responses", f"content[{j}].type"
    return None


def _inspect_sign(message: Mapping[str, Any]) -> str | None:
    """Where an Inspect AI message differs from an OpenAI Chat one: its tool calls and tool
    messages name the tool in a string `function` (OpenAI's `function` is an object), and
    its user messages have a `tool_call_id` (null, or the calls they carry output for)."""
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for j, call in enumerate(tool_calls):
            if isinstance(call, Mapping) and isinstance(call.get("function"), str):
                return f"tool_calls[{j}].function"
    if isinstance(message.get("function"), str):
        return "function"
    if message.get("role") == "user" and "tool_call_id" in message:
        return "tool_call_id"
    return None

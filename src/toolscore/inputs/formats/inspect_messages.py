"""Inspect AI chat messages: assistant `tool_calls` (`function`, `arguments`), answered by
`role: tool` messages.

Inspect's `ToolCall` names its tool in a plain string `function` and holds its arguments
already parsed (an object); when Inspect could not parse the model's arguments it keeps `{}`
and says why in `parse_error`, so such a call is scored as `arguments_unparseable` with that
text as what was produced. A tool message links to its call by `tool_call_id` and marks a
failure in `error` (`{type, message}`), whose text stands as the result when the content is
empty. A user message whose `tool_call_id` lists calls only
carries their output (an image, say) and is no user turn. Tool calls of type `custom` are
skipped and noted; content of a type Inspect does not write is unread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.values import json_type
from toolscore.inputs.formats.transcript import Transcript, UnreadableError, result_value, text_of

ROLES = ("system", "user", "assistant", "tool")
CONTENT = frozenset(
    {"text", "reasoning", "tool_use", "image", "audio", "video", "document", "data"}
)
"""The content types of Inspect's `Content` union."""
TOOL_CALLS = frozenset({"function", "custom"})


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Inspect `ChatMessage`s (as `model_dump()` or a log writes them) into `t`."""

    def read_one(message: Mapping[str, Any], where: str, role: str) -> None:
        content = t.content(message.get("content"), f"{where}.content", CONTENT, "content")
        if role == "user" and not message.get("tool_call_id"):
            t.user_turn()
        elif role == "assistant":
            _assistant(message, content, where, t)
        elif role == "tool":
            error = message.get("error")
            value = result_value(content)
            if error is not None and not value:
                value = _error_text(t.mapping(error, f"{where}.error"))
            t.result(message.get("tool_call_id"), value, error=error is not None)

    t.messages(node, key, ROLES, read_one)


def _assistant(message: Mapping[str, Any], content: Any, where: str, t: Transcript) -> None:
    t.assistant_message(text_of(content))
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        return
    for j, tool_call in enumerate(t.list_of(tool_calls, f"{where}.tool_calls")):
        at = f"{where}.tool_calls[{j}]"
        with t.part():
            _tool_call(t.mapping(tool_call, at), at, t)


def _tool_call(tool_call: Mapping[str, Any], where: str, t: Transcript) -> None:
    kind = "function" if tool_call.get("type") is None else t.kind(tool_call, where, TOOL_CALLS)
    if kind == "custom":
        t.skip("tool calls of type 'custom'")
        return
    function = tool_call.get("function")
    if not isinstance(function, str):
        raise UnreadableError(f"{where}.function", f"must be a string, got {json_type(function)}")
    parse_error = tool_call.get("parse_error")
    args = parse_error if isinstance(parse_error, str) else tool_call.get("arguments")
    t.call(function, args, tool_call.get("id"))


def _error_text(error: Mapping[str, Any]) -> str | None:
    """Inspect's `ToolCallError` as the text a person reads: `type: message`."""
    kind, message = error.get("type"), error.get("message")
    parts = [part for part in (kind, message) if isinstance(part, str) and part]
    return ": ".join(parts) or None

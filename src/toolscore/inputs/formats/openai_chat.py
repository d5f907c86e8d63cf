"""OpenAI Chat Completions messages: assistant `tool_calls`, answered by `role: tool` messages.

Arguments are the model's JSON string (sometimes an object) and are parsed like a plain
`calls` entry. The legacy single `function_call` is read too; its `role: function` results
carry no id and are linked to the call by name and position. Fields may be null or absent, as
the SDK's `model_dump()` writes them with or without `exclude_none`. `custom` tool calls
(free-form input) are skipped and noted; a content part or tool call of a type the API does
not write is unread (the case cannot pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.inputs.formats.transcript import Transcript, result_value, text_of

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
PARTS = frozenset({"text", "image_url", "input_audio", "file", "refusal"})
"""The content part types of Chat Completions messages."""
TOOL_CALLS = frozenset({"function", "custom"})


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Chat Completions messages into `t`."""

    def read_one(message: Mapping[str, Any], where: str, role: str) -> None:
        content = t.content(message.get("content"), f"{where}.content", PARTS, "parts")
        if role == "user":
            t.user_turn()
        elif role == "assistant":
            _assistant(message, content, where, t)
        elif role == "tool":
            t.result(message.get("tool_call_id"), result_value(content))
        elif role == "function":
            t.result(None, result_value(content), name=message.get("name"))

    t.messages(node, key, ROLES, read_one)


def reply(message: Any, where: str, t: Transcript) -> None:
    """Read one assistant message found at `where` (a ChatCompletion choice's `message`)."""
    with t.part():
        t.role(message, where, ("assistant",))
        content = t.content(message.get("content"), f"{where}.content", PARTS, "parts")
        _assistant(message, content, where, t)


def _assistant(message: Mapping[str, Any], content: Any, where: str, t: Transcript) -> None:
    t.assistant_message(text_of(content))
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        for j, tool_call in enumerate(t.list_of(tool_calls, f"{where}.tool_calls")):
            at = f"{where}.tool_calls[{j}]"
            with t.part():
                _tool_call(t.mapping(tool_call, at), at, t)
    legacy = message.get("function_call")
    if legacy is not None:
        with t.part():
            function = t.mapping(legacy, f"{where}.function_call")
            t.call(function.get("name"), function.get("arguments"), None)


def _tool_call(tool_call: Mapping[str, Any], where: str, t: Transcript) -> None:
    kind = "function" if tool_call.get("type") is None else t.kind(tool_call, where, TOOL_CALLS)
    if kind == "custom":
        t.skip("tool calls of type 'custom'")
        return
    function = t.mapping(tool_call.get("function"), f"{where}.function")
    t.call(function.get("name"), function.get("arguments"), tool_call.get("id"))

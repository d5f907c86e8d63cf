"""OpenAI Chat Completions messages: assistant `tool_calls`, answered by `role: tool` messages.

Arguments are the model's JSON string (sometimes an object) and are parsed like a plain
`calls` entry. The legacy single `function_call` is read too; its `role: function` results
carry no id and are linked to the call by name and position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.formats.transcript import Transcript, result_value, text_of

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Chat Completions messages into `t`."""
    for i, message in enumerate(t.list_of(node, key)):
        where = f"{key}[{i}]"
        role = t.role(message, where, ROLES)
        if role == "user":
            t.user_turn()
        elif role == "assistant":
            _assistant(message, where, t)
        elif role == "tool":
            t.result(message.get("tool_call_id"), result_value(message.get("content")))
        elif role == "function":
            t.result(None, result_value(message.get("content")), name=message.get("name"))


def _assistant(message: Mapping[str, Any], where: str, t: Transcript) -> None:
    t.assistant_message(text_of(message.get("content")))
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        for j, tool_call in enumerate(t.list_of(tool_calls, f"{where}.tool_calls")):
            at = f"{where}.tool_calls[{j}]"
            kind = t.mapping(tool_call, at).get("type", "function")
            if kind != "function":
                t.skip(f"tool calls of type {kind!r}")
                continue
            function = t.mapping(tool_call.get("function"), f"{at}.function")
            t.call(function.get("name"), function.get("arguments"), tool_call.get("id"))
    legacy = message.get("function_call")
    if legacy is not None:
        function = t.mapping(legacy, f"{where}.function_call")
        t.call(function.get("name"), function.get("arguments"), None)

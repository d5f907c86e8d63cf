"""LangChain messages: `type: "ai"` messages with `tool_calls`, answered by `type: "tool"`.

A message is told by its `type` (`ai`, `human`, `system`, `tool`, and the streaming chunk types
`AIMessageChunk`, ...), as `message.model_dump()` writes it, or wrapped as `messages_to_dict`
writes it: `{"type": "ai", "data": {...}}`. An AI message's calls are its `tool_calls`
(`{name, args, id}`, `args` an object), then its `invalid_tool_calls` (calls whose arguments
LangChain could not parse: `args` is the raw text, which fails as `arguments_unparseable`).
A tool message carries its call's result in `content`, linked by `tool_call_id`;
`status: "error"` marks an error. Other message types are unread (the case cannot pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolscore.core.values import json_type, show
from toolscore.inputs.formats.transcript import Transcript, UnreadableError, result_value, text_of

KINDS: Final = {
    "ai": "ai",
    "human": "human",
    "system": "system",
    "tool": "tool",
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
}
"""The message types read, and what each is."""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of LangChain messages into `t`."""
    for i, message in enumerate(t.items(node, key)):
        with t.part():
            where, body, kind = _message(message, f"{key}[{i}]", t)
            if kind == "human":
                t.user_turn()
            elif kind == "ai":
                _ai(body, where, t)
            elif kind == "tool":
                value = result_value(body.get("content"))
                t.result(body.get("tool_call_id"), value, error=body.get("status") == "error")


def reply(message: Any, where: str, t: Transcript) -> None:
    """Read one AI message found at `where` (its `model_dump()`, or `messages_to_dict`'s)."""
    with t.part():
        at, body, kind = _message(message, where, t)
        if kind != "ai":
            raise UnreadableError(f"{where}.type", f"a reply is an ai message, not {kind}")
        _ai(body, at, t)


def _message(message: Any, where: str, t: Transcript) -> tuple[str, Mapping[str, Any], str]:
    """(where the message's fields are, the fields, what the message is)."""
    message = t.mapping(message, where)
    kind = message.get("type")
    if not isinstance(kind, str):
        raise UnreadableError(f"{where}.type", f"must be a string, got {json_type(kind)}")
    if kind not in KINDS:
        known = ", ".join(KINDS)
        raise UnreadableError(
            f"{where}.type", f"unknown langchain message type {show(kind)}; known: {known}"
        )
    data = message.get("data")
    if isinstance(data, Mapping) and "content" not in message:  # messages_to_dict's wrapping
        return f"{where}.data", data, KINDS[kind]
    return where, message, KINDS[kind]


def _text(content: Any) -> str | None:
    """An AI message's text: its content string, or the strings and text blocks of its list."""
    if isinstance(content, list):
        texts = [item if isinstance(item, str) else text_of([item]) for item in content]
        return "\n".join(text for text in texts if text) or None
    return text_of(content)


def _ai(message: Mapping[str, Any], where: str, t: Transcript) -> None:
    t.assistant_message(_text(message.get("content")))
    for field in ("tool_calls", "invalid_tool_calls"):
        calls = message.get(field)
        if calls is None:
            continue
        for j, node in enumerate(t.list_of(calls, f"{where}.{field}")):
            with t.part():
                call = t.mapping(node, f"{where}.{field}[{j}]")
                t.call(call.get("name"), call.get("args"), call.get("id"))

"""OpenAI Responses API items: `function_call` items answered by `function_call_output` items.

Calls and their outputs are linked by `call_id`; `message` items (or bare `{role, content}`
items) mark user turns and carry the assistant's text. Built-in tool items (`web_search_call`,
`mcp_call`, `custom_tool_call`, ...) are not the agent's function calls: skipped, noted. Fields
may be null or absent, as the SDK's `model_dump()` writes them with or without `exclude_none`.
An item or content part of a type the API does not write is unread (the case cannot pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.inputs.formats.transcript import Transcript, UnreadableError, result_value, text_of

ROLES = ("user", "assistant", "system", "developer")
QUIET = frozenset(
    {
        "reasoning",
        "item_reference",
        "compaction",
        "compaction_trigger",
        "configuration_update",
        "additional_tools",
    }
)
"""Item types skipped without a note: they never hold a call or a result."""
BUILT_IN = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "custom_tool_call",
        "custom_tool_call_output",
        "tool_search_call",
        "tool_search_output",
        "program",
        "program_output",
    }
)
"""Items of built-in tools, custom (free-form) tools and programs: skipped, counted in a note."""
KNOWN = frozenset({"message", "function_call", "function_call_output"}) | QUIET | BUILT_IN
"""Every item type the Responses API and the SDK write (input and output)."""
PARTS = frozenset(
    {"input_text", "input_image", "input_file", "input_audio", "output_text", "refusal"}
)
"""The content part types of a message item."""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Responses API items into `t`."""
    calling = False
    for i, item in enumerate(t.items(node, key)):
        where = f"{key}[{i}]"
        kind = None
        with t.part():
            kind = _kind(t.mapping(item, where), where, t)
            if kind == "function_call":
                if not calling:
                    t.assistant_message(None)
                t.call(item.get("name"), item.get("arguments"), item.get("call_id"))
            elif kind == "function_call_output":
                t.result(item.get("call_id"), result_value(item.get("output")))
            elif kind == "message":
                _message(item, where, t)
            elif kind in BUILT_IN:
                t.skip(f"{kind} items")
        calling = kind == "function_call"


def _kind(item: Mapping[str, Any], where: str, t: Transcript) -> str:
    if item.get("type") is None:
        if item.get("role") is None:
            message = "every item needs a type (or a role, for a message)"
            raise UnreadableError(f"{where}.type", message)
        return "message"
    return t.kind(item, where, KNOWN)


def _message(item: Mapping[str, Any], where: str, t: Transcript) -> None:
    role = t.role(item, where, ROLES)
    content = t.content(item.get("content"), f"{where}.content", PARTS, "parts")
    if role == "user":
        t.user_turn()
    elif role == "assistant":
        t.assistant_message(text_of(content))

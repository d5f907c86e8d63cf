"""Anthropic Messages: `tool_use` blocks in assistant messages, `tool_result` blocks after them.

A user message made only of `tool_result` blocks carries results, not a new user turn.
`is_error: true` on a result is kept as `result_error`. Server-side tool blocks
(`server_tool_use`, `web_search_tool_result`, ...) are not the agent's function calls: skipped,
noted. A message may be a whole `Message` as the SDK dumps it (`type: "message"`, usage, ...).
A block of a type the API does not write is unread (the case cannot pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.inputs.formats.transcript import Transcript, result_value

ROLES = ("user", "assistant", "system")
QUIET = frozenset(
    {"thinking", "redacted_thinking", "image", "document", "search_result", "container_upload"}
)
"""Block types skipped without a note: they never hold a call or a result."""
SERVER = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)
"""Blocks of tools the API runs itself: skipped, counted in a note."""
KNOWN = frozenset({"text", "tool_use", "tool_result"}) | QUIET | SERVER
"""Every block type the Messages API and the SDK write (request and response)."""

Block = tuple[str, str, Any]
"""(field path, block type, block)"""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Anthropic messages into `t`."""

    def read_one(message: Mapping[str, Any], where: str, role: str) -> None:
        if role != "system":
            blocks = _blocks(message.get("content"), f"{where}.content", t)
            if role == "user":
                _user(blocks, t)
            else:
                _assistant(blocks, t)

    t.messages(node, key, ROLES, read_one)


def reply(message: Any, where: str, t: Transcript) -> None:
    """Read one assistant message found at `where` (an SDK `Message`, or one accumulated
    from its stream events)."""
    with t.part():
        t.role(message, where, ("assistant",))
        _assistant(_blocks(message.get("content"), f"{where}.content", t), t)


def _blocks(content: Any, where: str, t: Transcript) -> list[Block]:
    """The blocks of a message that can be read (the others are counted as unread)."""
    if isinstance(content, str):
        return [(where, "text", {"type": "text", "text": content})]
    blocks = []
    for j, block in enumerate(t.list_of(content, where)):
        at = f"{where}[{j}]"
        with t.part():
            blocks.append((at, t.kind(t.mapping(block, at), at, KNOWN), block))
    return blocks


def _user(blocks: list[Block], t: Transcript) -> None:
    for where, kind, block in blocks:
        if kind == "tool_result":
            value = result_value(block.get("content", ""))
            t.result(block.get("tool_use_id"), value, error=block.get("is_error") is True)
        elif kind == "tool_use":
            t.unread(f"{where}.type", "a tool_use block belongs in an assistant message")
    if not blocks or any(kind != "tool_result" for _, kind, _ in blocks):
        t.user_turn()


def _assistant(blocks: list[Block], t: Transcript) -> None:
    texts = [block.get("text") for _, kind, block in blocks if kind == "text"]
    t.assistant_message("\n".join(text for text in texts if isinstance(text, str)) or None)
    for where, kind, block in blocks:
        if kind == "tool_use":
            t.call(block.get("name"), block.get("input"), block.get("id"))
        elif kind == "tool_result":
            t.unread(f"{where}.type", "a tool_result block belongs in a user message")
        elif kind in SERVER:
            t.skip(f"{kind} blocks")

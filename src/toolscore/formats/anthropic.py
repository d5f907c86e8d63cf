"""Anthropic Messages: `tool_use` blocks in assistant messages, `tool_result` blocks after them.

A user message made only of `tool_result` blocks carries results, not a new user turn.
`is_error: true` on a result is kept as `result_error`. Server-side tool blocks
(`server_tool_use`, `mcp_tool_use`, ...) are not the agent's function calls: skipped, noted.
"""

from __future__ import annotations

from typing import Any

from toolscore.formats.transcript import Transcript, result_value

ROLES = ("user", "assistant", "system")
QUIET = frozenset({"thinking", "redacted_thinking", "image", "document", "search_result"})
"""Block types skipped without a note: they never hold a call or a result."""

Block = tuple[str, str, Any]
"""(field path, block type, block)"""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Anthropic messages into `t`."""
    for i, message in enumerate(t.list_of(node, key)):
        where = f"{key}[{i}]"
        role = t.role(message, where, ROLES)
        if role == "system":
            continue
        blocks = _blocks(message.get("content"), f"{where}.content", t)
        if role == "user":
            _user(blocks, t)
        else:
            _assistant(blocks, t)


def _blocks(content: Any, where: str, t: Transcript) -> list[Block]:
    if isinstance(content, str):
        return [(where, "text", {"type": "text", "text": content})]
    blocks = []
    for j, block in enumerate(t.list_of(content, where)):
        kind = t.mapping(block, f"{where}[{j}]").get("type")
        if not isinstance(kind, str):
            raise t.error(f"{where}[{j}].type", "every content block needs a type")
        blocks.append((f"{where}[{j}]", kind, block))
    return blocks


def _user(blocks: list[Block], t: Transcript) -> None:
    for where, kind, block in blocks:
        if kind == "tool_result":
            value = result_value(block.get("content", ""))
            t.result(block.get("tool_use_id"), value, error=block.get("is_error") is True)
        elif kind == "tool_use":
            raise t.error(f"{where}.type", "a tool_use block belongs in an assistant message")
    if not blocks or any(kind != "tool_result" for _, kind, _ in blocks):
        t.user_turn()


def _assistant(blocks: list[Block], t: Transcript) -> None:
    texts = [block.get("text") for _, kind, block in blocks if kind == "text"]
    t.assistant_message("\n".join(text for text in texts if isinstance(text, str)) or None)
    for where, kind, block in blocks:
        if kind == "tool_use":
            t.call(block.get("name"), block.get("input"), block.get("id"))
        elif kind == "tool_result":
            raise t.error(f"{where}.type", "a tool_result block belongs in a user message")
        elif kind != "text" and kind not in QUIET:
            t.skip(f"{kind} blocks")

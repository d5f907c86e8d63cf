"""OpenAI Responses API items: `function_call` items answered by `function_call_output` items.

Calls and their outputs are linked by `call_id`; `message` items (or bare `{role, content}`
items) mark user turns and carry the assistant's text. Built-in tool items (`web_search_call`,
`mcp_call`, ...) are not the agent's function calls: skipped, noted.
"""

from __future__ import annotations

from typing import Any

from toolscore.formats.transcript import Transcript, result_value, text_of

ROLES = ("user", "assistant", "system", "developer")
QUIET = frozenset({"reasoning", "item_reference"})
"""Item types skipped without a note: they never hold a call or a result."""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Responses API items into `t`."""
    calling = False
    for i, item in enumerate(t.list_of(node, key)):
        where = f"{key}[{i}]"
        kind = t.mapping(item, where).get("type", "message" if "role" in item else None)
        if not isinstance(kind, str):
            raise t.error(f"{where}.type", "every item needs a type (or a role, for a message)")
        if kind == "function_call":
            if not calling:
                t.assistant_message(None)
            t.call(item.get("name"), item.get("arguments"), item.get("call_id"))
        elif kind == "function_call_output":
            t.result(item.get("call_id"), result_value(item.get("output")))
        elif kind == "message":
            role = t.role(item, where, ROLES)
            if role == "user":
                t.user_turn()
            elif role == "assistant":
                t.assistant_message(text_of(item.get("content")))
        elif kind not in QUIET:
            t.skip(f"{kind} items")
        calling = kind == "function_call"

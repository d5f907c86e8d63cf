"""What an outputs line that says nothing readable looks like, so its error can say how to fix it.

A line with no `calls`, transcript, response object or stream, whose keys no reader uses, is
an input error: scoring it as no call would turn a harness's saving mistake into a silent
zero. So is a `calls` entry that is a provider's own object (a response, a message, an OpenAI
tool call, a Responses or Anthropic call block whose arguments sit under another key than
`args`). The hints only name what the line resembles; they never decide how it is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from toolscore.core.values import json_type, show
from toolscore.errors import OutputError
from toolscore.inputs.formats.responses import shape_of
from toolscore.inputs.formats.streams import ANTHROPIC_EVENTS

ARGUMENT_SPELLINGS: Final = ("arguments", "input", "parameters")
"""Keys other formats keep a call's arguments under; a `calls` entry names them `args`."""
KEYS_SHOWN: Final = 12

SAVE = (
    'save the object as the line ({**response, "id": ...}) or under response '
    '({"id": ..., "response": response})'
)


def _keys(keys: Iterable[str]) -> str:
    listed = sorted(keys)
    shown = ", ".join(show(key) for key in listed[:KEYS_SHOWN])
    return shown + (f" and {len(listed) - KEYS_SHOWN} more" if len(listed) > KEYS_SHOWN else "")


STREAM = "save all of the stream's chunks or events, in order, as a list under stream"
MESSAGES = "put the conversation, a list of messages, under messages"
MCP = (
    "put the session's messages, in order, in a list under mcp, or give a log of one message "
    "a line, each with its session_id, as the outputs file itself"
)
BLOCKS = {
    "function_call": "an OpenAI Responses item (items hold them)",
    "tool_use": "an Anthropic tool_use block (save the message under messages)",
}


def an(noun: str) -> str:
    """`noun` with its indefinite article."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def resembles(node: Mapping[str, Any]) -> str | None:
    """What a provider object that no reader takes looks like, and how to save it; None
    when it looks like nothing known."""
    if "jsonrpc" in node:
        return f"an MCP JSON-RPC message: {MCP}"
    shape = shape_of(node)
    if shape is not None:
        return f"a {shape.name} ({shape.format}): {SAVE}"
    kind, obj = node.get("type"), node.get("object")
    if obj == "chat.completion.chunk" or (isinstance(kind, str) and kind.startswith("response.")):
        return f"one chunk or event of a stream: {STREAM}"
    if isinstance(kind, str) and kind in ANTHROPIC_EVENTS:
        return f"one Anthropic stream event: {STREAM}"
    if "choices" in node:
        choices = json_type(node["choices"])
        return (
            'an OpenAI ChatCompletion, but one has "object": "chat.completion" and a list of '
            f"choices (this one: object {show(obj)}, choices {an(choices)})"
        )
    if "output" in node and (obj is not None or "created_at" in node):
        output = json_type(node["output"])
        return (
            'an OpenAI Responses Response, but one has "object": "response" and a list '
            f"output (this one: object {show(obj)}, output {an(output)})"
        )
    if "message" in node and "finish_reason" in node:
        return (
            "one choice of a ChatCompletion: save the whole ChatCompletion, or the message "
            "in a list under messages"
        )
    if "role" in node:
        return f"one message (role {show(node.get('role'))}): {MESSAGES}"
    if "tool_calls" in node:
        return f"an assistant message's tool_calls: {MESSAGES}"
    return None


def _entry_hint(entry: Any) -> str | None:
    """What a `calls` entry that is not a call is, or None when it may be scored as one."""
    if not isinstance(entry, Mapping):
        return None
    named = isinstance(entry.get("name"), str)
    if not named:
        function = entry.get("function")
        if entry.get("type") == "function" and isinstance(function, Mapping):
            return (
                "an OpenAI tool call ({type: function, function: {name, arguments}}): give "
                "each call as {name, args} (args may be the arguments' JSON text), or save "
                "the assistant message in a list under messages"
            )
        for key in ("function_call", "functionCall"):
            if isinstance(entry.get(key), Mapping):
                return f"a Gemini part ({key}): save the contents under contents"
        return resembles(entry)
    if "args" in entry:
        return None
    for key in ARGUMENT_SPELLINGS:
        if key in entry:
            kind = entry.get("type")
            block = BLOCKS.get(kind) if isinstance(kind, str) else None
            what = f", {block}" if block else ""
            return f"a call with its arguments under {key}{what}: a calls entry names them args"
    return None


def check_calls(entries: list[Any], source: str, line: int | None) -> None:
    """Refuse a `calls` list holding a provider's own objects instead of calls (asked only
    of a list with a call without arguments; an entry with a string `name` and `args` is
    never one)."""
    for i, entry in enumerate(entries):
        hint = _entry_hint(entry)
        if hint is not None:
            message = f"this is not a call but {hint}"
            raise OutputError(source, message, line=line, field=f"calls[{i}]")


def calls_error(node: Any, source: str, line: int | None) -> OutputError:
    """The error for a `calls` that is not a list, saying what it looks like."""
    found = resembles(node) if isinstance(node, Mapping) else None
    hint = f": it holds {found}" if found else ""
    return OutputError(source, f"must be a list of calls{hint}", line=line, field="calls")


def unknown_line(
    data: Mapping[str, Any], unknown: Iterable[str], source: str, line: int | None
) -> OutputError:
    """The error for a line that says nothing a reader understands about the agent's calls."""
    found = resembles(data)
    hint = f"; it looks like {found}" if found else ""
    message = (
        "no calls, transcript (messages, items, contents, spans, resourceSpans, mcp), response "
        f"object or stream, only keys no reader uses: {_keys(unknown)}{hint}. An output "
        'without any call says "calls": []'
    )
    return OutputError(source, message, line=line)


def response_error(node: Any, source: str, line: int | None) -> OutputError:
    """The error for a `response` that is neither text nor a response object any reader
    takes, on a line that gives no calls beside it: it may hold calls no one reads."""
    found = resembles(node) if isinstance(node, Mapping) else None
    hint = f"; it looks like {found}" if found else ""
    message = (
        f"{an(json_type(node))} that is no response object toolscore reads{hint}. Beside "
        'calls (or "calls": [] for none) a response that is not text is kept as its JSON text'
    )
    return OutputError(source, message, line=line, field="response")

"""MCP session logs: the JSON-RPC 2.0 messages an MCP client or proxy saw, read as calls.

The calls are the `tools/call` requests (`params.name`, `params.arguments`), in the order
they were sent; each call's result is the response with the same `id`, wherever it comes
after it: its `structuredContent` when present, else its `content` (a list of text blocks
becomes their joined text, which `$ref` parses as JSON where it is JSON, as every reader's
text results). A result with `isError: true`, or a JSON-RPC `error` (kept whole: `code`,
`message`, `data`), marks the call's result as an error.

Other messages (`initialize`, `tools/list`, pings, notifications, sampling, elicitation, and
their responses) hold no call and are skipped. A JSON-RPC batch (an array of messages) is read
message by message. An entry may be a proxy's record `{..., "message": {...}}`, read as its
`message`. A `notifications/cancelled` naming a pending call leaves that call without a result
(noted).

What looks like a call but cannot be understood is unread, and the case cannot pass: a
`tools/call` without an id (a string or an integer), a `params.name` or object `arguments`;
two `tools/call` requests with one id; a request with no response; a response whose id no
pending request has (or which two pending requests share, and whose shape does not say
which); a response with both `result` and `error`, a result without a `content` list, a
content block MCP does not define, a `resultType` other than `complete` (a result asking
for input or a task's handle, whose outcome another request fetches). An entry that is not
a JSON-RPC message at all is unread too.

An MCP log has no user messages: every call is in one turn, and every call is scored, as for
OpenTelemetry spans. The line's `response`, when given, is the agent's final answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from toolscore.core.model import MISSING
from toolscore.core.values import json_type, show
from toolscore.inputs.formats.transcript import Transcript, UnreadableError, result_value

CALL: Final = "tools/call"
CANCELLED: Final = "notifications/cancelled"
CONTENT_TYPES: Final = frozenset({"text", "image", "audio", "resource_link", "resource"})
"""The content block types MCP defines for a tool's result."""
COMPLETE: Final = "complete"
"""The one `resultType` that holds a tool's outcome (absent means it too)."""

Key = tuple[str, Any]
"""A JSON-RPC id that keeps `7` and `"7"` apart."""


def id_key(value: Any) -> Key | None:
    """The key of a JSON-RPC id MCP allows (a string or an integer), else None."""
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, int) and not isinstance(value, bool):
        return ("integer", value)
    return None


@dataclass
class _Call:
    """A `tools/call` request read so far, and what its response said."""

    where: str
    name: str
    args: Any
    call_id: str
    result: Any = MISSING
    error: bool = False
    answered: bool = False
    cancelled: bool = False


@dataclass
class _Session:
    """The state of one log's reading: the calls in request order and what is pending."""

    t: Transcript
    calls: list[_Call] = field(default_factory=list)
    pending: dict[Key, list[_Call | None]] = field(default_factory=dict)
    """Requests awaiting a response, by id: a call, or None for any other request."""
    seen: set[Key] = field(default_factory=set)
    """The ids of every `tools/call` request so far (a second one with an id is unread)."""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of MCP JSON-RPC messages into `t`."""
    session = _Session(t)
    for i, entry in enumerate(t.items(node, key)):
        where = f"{key}[{i}]"
        if isinstance(entry, list):  # a JSON-RPC batch
            if not entry:
                t.unread(where, "an empty JSON-RPC batch")
            for j, message in enumerate(entry):
                with t.part():
                    _message(message, f"{where}[{j}]", session)
        else:
            with t.part():
                _message(entry, where, session)
    cancelled = 0
    for call in session.calls:
        if not call.answered:
            if call.cancelled:
                cancelled += 1
            else:
                t.unread(call.where, f"tools/call {call.call_id} has no response")
        t.call(call.name, call.args, call.call_id, result=call.result, error=call.error)
    if cancelled:
        t.notes.append(f"mcp: calls cancelled without a result ({cancelled})")


def _message(entry: Any, where: str, s: _Session) -> None:
    """Read one message (or a proxy's record of one)."""
    message = s.t.mapping(entry, where)
    if not _is_jsonrpc(message) and isinstance(message.get("message"), Mapping):
        where, message = f"{where}.message", message["message"]
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            raise UnreadableError(f"{where}.method", f"must be a string, got {json_type(method)}")
        if method == CALL:
            _request(message, where, s)
        elif method == CANCELLED:
            _cancel(message, s)
        elif "id" in message:  # another request: its response is not a call's
            request = id_key(message["id"])
            if request is not None:
                s.pending.setdefault(request, []).append(None)
    elif "result" in message or "error" in message:
        _response(message, where, s)
    else:
        reason = "not a JSON-RPC message (no method, result or error)"
        raise UnreadableError(where, reason)


def _is_jsonrpc(message: Mapping[str, Any]) -> bool:
    """Whether `message` is a JSON-RPC message itself (else it may be a proxy's record)."""
    return any(key in message for key in ("jsonrpc", "method", "result", "error"))


def _request(message: Mapping[str, Any], where: str, s: _Session) -> None:
    """A `tools/call` request: a call, once its id, name and arguments are understood (a
    request that is not is unread once: its response, if any, is taken as no call's)."""
    raw_id = message.get("id")
    request = id_key(raw_id)
    if request is None:
        reason = f"a tools/call needs an id, a string or an integer, got {show(raw_id)}"
        raise UnreadableError(f"{where}.id", reason)
    waiting = s.pending.setdefault(request, [])
    try:
        name, args = _named(message, where, s.t)
        if request in s.seen:
            reason = f"an earlier tools/call has the id {show(raw_id)}: which response is whose?"
            raise UnreadableError(f"{where}.id", reason)
    except UnreadableError:
        waiting.append(None)
        raise
    s.seen.add(request)
    call = _Call(where, name, args, str(raw_id))
    s.calls.append(call)
    waiting.append(call)


def _named(message: Mapping[str, Any], where: str, t: Transcript) -> tuple[str, Any]:
    """The tool's name and arguments of a `tools/call` request."""
    params = t.mapping(message.get("params"), f"{where}.params")
    name = params.get("name")
    if not isinstance(name, str) or not name:
        got = json_type(name) if not isinstance(name, str) else "an empty string"
        raise UnreadableError(
            f"{where}.params.name", f"a tool's name is a non-empty string, got {got}"
        )
    args = params.get("arguments")
    if args is not None and not isinstance(args, Mapping):
        reason = f"must be an object, got {json_type(args)}"
        raise UnreadableError(f"{where}.params.arguments", reason)
    return name, args


def _cancel(message: Mapping[str, Any], s: _Session) -> None:
    """`notifications/cancelled`: the call it names expects no response."""
    params = message.get("params")
    request = id_key(params.get("requestId")) if isinstance(params, Mapping) else None
    waiting = s.pending.get(request) if request is not None else None
    for call in waiting or ():
        if call is not None:
            call.cancelled = True


def _response(message: Mapping[str, Any], where: str, s: _Session) -> None:
    """A response: the result of the pending `tools/call` with its id, if it is one."""
    raw_id = message.get("id")
    request = id_key(raw_id)
    waiting = s.pending.get(request, []) if request is not None else []
    if not waiting:
        reason = f"a response to id {show(raw_id)}, which no pending request in the log has"
        raise UnreadableError(f"{where}.id", reason)
    index = _answered(waiting, message)
    if index is None:
        call = waiting.pop(next(i for i, c in enumerate(waiting) if c is not None))
        assert call is not None
        call.answered = True  # unread here, not again as a call without a response
        reason = f"id {show(raw_id)} is a tools/call's and another request's: which is answered?"
        raise UnreadableError(f"{where}.id", reason)
    call = waiting.pop(index)
    if call is not None:
        call.answered = True
    error, result = message.get("error"), message.get("result")  # null: absent (JSON-RPC 1.0)
    if error is not None and result is not None:
        raise UnreadableError(f"{where}.error", "a response has a result or an error, not both")
    if call is None:
        return  # the response to another request
    if error is not None:
        call.result, call.error = dict(s.t.mapping(error, f"{where}.error")), True
        return
    result = s.t.mapping(result, f"{where}.result")
    call.result = _outcome(result, f"{where}.result", s.t)
    flag = result.get("isError")
    if flag is not None and not isinstance(flag, bool):
        reason = f"must be a boolean, got {json_type(flag)}"
        raise UnreadableError(f"{where}.result.isError", reason)
    call.error = flag is True


def _answered(waiting: list[_Call | None], message: Mapping[str, Any]) -> int | None:
    """Which of the requests pending with the response's id it answers: the first, unless
    a call and another request share the id (a client's and a server's ids may collide),
    when the response's shape decides; None when it cannot."""
    calls = [i for i, c in enumerate(waiting) if c is not None]
    others = [i for i, c in enumerate(waiting) if c is None]
    if not calls or not others:
        return 0
    result = message.get("result")
    if isinstance(result, Mapping):
        return calls[0] if isinstance(result.get("content"), list) else others[0]
    return None


def _outcome(result: Mapping[str, Any], where: str, t: Transcript) -> Any:
    """What a tool returned: its structured content, else its content blocks (text joined)."""
    kind = result.get("resultType")
    if kind is not None and kind != COMPLETE:
        reason = f"a result of type {show(kind)} holds no tool outcome (only {COMPLETE!r} does)"
        raise UnreadableError(f"{where}.resultType", reason)
    content = result.get("content")
    if not isinstance(content, list):
        got = json_type(content) if "content" in result else "none"
        raise UnreadableError(f"{where}.content", f"a tool's result has a content list, got {got}")
    for j, block in enumerate(content):
        at = f"{where}.content[{j}]"
        t.kind(t.mapping(block, at), at, CONTENT_TYPES)
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            got = json_type(block.get("text"))
            raise UnreadableError(f"{at}.text", f"must be a string, got {got}")
    structured = result.get("structuredContent")
    if structured is not None:
        return structured
    return result_value(content)
